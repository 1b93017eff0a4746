//! The operating system calls the pipeline makes beyond the standard library's: the crate's
//! only `unsafe` code (tests/layers.rs holds it here).

use std::fs::File;
use std::io;
#[cfg(not(unix))]
use std::io::Read;

/// Appends `need` bytes of `file` to `out` (fewer at the end of the file) in as few `read`s as
/// the kernel allows, straight into `out`'s spare capacity, which is not zeroed first.
/// (`read_to_end` through `take` starts every call at 8 KiB reads and doubles: five `read`s
/// per 128 KiB.)
#[cfg(unix)]
pub(crate) fn read_spare(file: &File, out: &mut Vec<u8>, need: usize) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    out.reserve(need);
    let mut done = 0;
    while done < need {
        let spare = &mut out.spare_capacity_mut()[..need - done];
        // SAFETY: `spare` is `need - done` bytes of `out`'s allocation, owned and not aliased;
        // `read` writes at most that many bytes there and returns how many it wrote, which
        // are then initialized (the only bytes `set_len` adds).
        let r = unsafe {
            libc::read(
                file.as_raw_fd(),
                spare.as_mut_ptr().cast::<libc::c_void>(),
                spare.len(),
            )
        };
        match r {
            0 => break,
            r if r > 0 => {
                let n = r as usize;
                // SAFETY: `read` initialized the `n` bytes after `out.len()`, within capacity.
                unsafe {
                    out.set_len(out.len() + n);
                }
                done += n;
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(done)
}

/// [`read_spare`] elsewhere (Windows; the WASI build, which never runs the pipeline): the
/// standard library's reads, 8 KiB first and doubling.
#[cfg(not(unix))]
pub(crate) fn read_spare(file: &File, out: &mut Vec<u8>, need: usize) -> io::Result<usize> {
    file.take(need as u64).read_to_end(out)
}

/// A new descriptor for the open file descriptor `fd` (close-on-exec), owned by the returned
/// `File`: the output, or stdin, that a caller outside Rust hands over by number. Duplicating
/// leaves `fd` itself as it was; a number that is not an open descriptor is an error
/// (`EBADF`).
#[cfg(unix)]
pub fn duplicate(fd: i32) -> io::Result<File> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: `fcntl(F_DUPFD_CLOEXEC)` reads no memory of ours and only adds a descriptor (or
    // fails); any integer is a valid argument.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is the open descriptor `fcntl` just made, owned by nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(new) }))
}

/// Elsewhere (Windows, the WASI build) the CLI takes the transcode stream.
#[cfg(not(unix))]
pub fn duplicate(_fd: i32) -> io::Result<File> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the dump pipeline needs a Unix file descriptor",
    ))
}
