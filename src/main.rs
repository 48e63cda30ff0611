//! The `ryechain` binary: everything lives in the library; this only picks the allocator and
//! calls the CLI edge.

/// mimalloc instead of glibc malloc: the parallel lint allocates many small short-lived nodes
/// (parser trees) from every worker, and glibc's arena locking and consolidation showed up as
/// the largest cost in `perf` (ARCHITECTURE.md, "Allocator").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    ryechain::main()
}
