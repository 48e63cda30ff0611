//! The `ryechain` CLI with the system allocator, for heap profilers that hook `malloc`
//! (`heaptrack ./target/release/examples/cli_system_alloc lint …`): the installed binary uses
//! mimalloc, which such tools do not see.

fn main() -> std::process::ExitCode {
    ryechain::cli::main()
}
