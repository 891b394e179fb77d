//! The `dedust` binary: parses the command line and runs one subcommand (see `cli.rs`).

mod cli;
mod cmd;

fn main() {
    std::process::exit(cli::run());
}
