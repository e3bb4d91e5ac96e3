//! crashfs: a FUSE filesystem that simulates power cuts, for crash tests (in the spirit of LazyFS).
//!
//! ```text
//! crashfs BACKING MOUNTPOINT [--seed N]
//! ```
//! Programs see an ordinary filesystem at MOUNTPOINT. Only fsync'ed file contents and fsync'ed
//! directory entries reach BACKING (see `model.rs` for the exact rules); everything else lives in
//! this process's memory. A power cut is the end of this process:
//! - `kill -KILL`: every unsynced change is lost;
//! - `kill -USR1`: the same, except that a leading part of the last unsynced write reaches the
//!   disk first (a torn write; `--seed` makes the part's length reproducible).
//!
//! Then `umount -l MOUNTPOINT` and mount again: the new process sees exactly what survived.
//! SIGTERM or SIGINT unmount cleanly (nothing is synced by that either).

mod backing;
mod fs;
mod kind;
mod model;
#[cfg(test)]
mod model_tests;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use fuser::{Config, MountOption};

use crate::model::Model;

struct Args {
    backing: PathBuf,
    mountpoint: PathBuf,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut seed = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => {
                let v = args.next().ok_or("--seed needs a number")?;
                seed = Some(v.parse().map_err(|_| format!("bad --seed {v}"))?);
            }
            "-h" | "--help" => return Err(String::new()),
            _ => positional.push(PathBuf::from(a)),
        }
    }
    let [backing, mountpoint] = <[PathBuf; 2]>::try_from(positional)
        .map_err(|_| "expected BACKING and MOUNTPOINT".to_string())?;
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    Ok(Args {
        backing,
        mountpoint,
        seed,
    })
}

/// A number in [0, 1) from the seed (xorshift64*).
fn fraction(seed: u64) -> f64 {
    let mut x = seed | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
}

/// Blocks the control signals in this thread (and so in every thread it starts), so that only
/// `sigwait` below receives them.
fn block_signals() -> libc::sigset_t {
    // SAFETY: plain libc calls on a local, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGUSR1, libc::SIGTERM, libc::SIGINT] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(why) => {
            eprintln!("usage: crashfs BACKING MOUNTPOINT [--seed N]\n{why}");
            std::process::exit(2);
        }
    };
    let model = match Model::load(&args.backing) {
        Ok(m) => Arc::new(Mutex::new(m)),
        Err(e) => {
            eprintln!("crashfs: cannot load {}: {e}", args.backing.display());
            std::process::exit(1);
        }
    };
    let signals = block_signals();
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("crashfs".into()),
        MountOption::Subtype("crashfs".into()),
    ];
    let session =
        match fuser::spawn_mount(fs::CrashFs::new(model.clone()), &args.mountpoint, &config) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("crashfs: cannot mount {}: {e}", args.mountpoint.display());
                std::process::exit(1);
            }
        };
    println!(
        "crashfs: mounted {} (durable state in {})",
        args.mountpoint.display(),
        args.backing.display()
    );
    let _ = std::io::stdout().flush();
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: waits on the set blocked above; `sig` is a valid out pointer.
        if unsafe { libc::sigwait(&signals, &mut sig) } != 0 {
            continue;
        }
        if sig == libc::SIGUSR1 {
            let m = model.lock().unwrap_or_else(|p| p.into_inner());
            match m.tear_last_write(fraction(args.seed)) {
                Ok(Some((w, kept))) => eprintln!(
                    "crashfs: power cut, tearing the last unsynced write: inode {} at {}, {kept} of {} bytes kept",
                    w.ino,
                    w.offset,
                    w.data.len()
                ),
                Ok(None) => eprintln!("crashfs: power cut (no unsynced write to tear)"),
                Err(e) => eprintln!("crashfs: power cut; tearing failed: {e}"),
            }
            // Like the power going: no unmount, no destructor, no flush.
            // SAFETY: _exit only ends the process.
            unsafe { libc::_exit(0) };
        }
        drop(session);
        return;
    }
}
