//! The `ryechain` binary: everything lives in the library; this only calls the CLI edge.

fn main() -> std::process::ExitCode {
    ryechain::cli::main()
}
