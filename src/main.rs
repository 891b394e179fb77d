//! The `dedust` binary: parses the command line and runs one subcommand (see `cli.rs`).

// learn allocates many short strings (candidate outputs, tokens) from two threads; mimalloc
// takes 15-20 % off its wall time at 1 M URLs against glibc's allocator (README, "learn at
// scale"). The libraries leave the allocator to whoever embeds them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's collection (linked in with the allocator): with `force`, freed memory goes
    /// back to the system now instead of after its purge delay.
    fn mi_collect(force: bool);
}

/// Give the memory the last stage freed back to the system (`learn` calls it between stages:
/// each frees hundreds of megabytes that mimalloc would otherwise keep for a while, and the
/// next stage's peak would come on top of them).
pub fn release_freed_memory() {
    // SAFETY: `mi_collect` takes no pointers and may be called from any thread at any time.
    unsafe { mi_collect(true) }
}

mod cli;
mod cmd;

fn main() -> std::process::ExitCode {
    // Exit codes are small (0-3, README "Exit codes").
    std::process::ExitCode::from(u8::try_from(cli::run()).unwrap_or(1))
}
