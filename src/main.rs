//! coalprof's entry point; the program is the library's `main` (`src/lib.rs`).

fn main() -> std::process::ExitCode {
    coalprof::main()
}
