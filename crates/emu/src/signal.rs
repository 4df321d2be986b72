//! A clean stop on SIGTERM and SIGINT: while an emulator runs with signals on, both only
//! write a byte to a pipe the emulator polls (the self-pipe pattern; `write` is
//! async-signal-safe), so it stops between two frames and reports its counters. The
//! previous handlers come back when it returns.
//!
//! One emulator per process at a time can hold the handlers (the Python backend runs one
//! per child process); a second one at the same time runs without them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// The write end of the pipe the handler writes to, or -1 when no guard is installed.
static PIPE: AtomicI32 = AtomicI32::new(-1);
/// The signal that stopped the emulator (0: none).
static CAUGHT: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 2] = [libc::SIGTERM, libc::SIGINT];

extern "C" fn on_signal(signal: libc::c_int) {
    // SAFETY: errno is saved and restored around `write`, which is async-signal-safe.
    unsafe {
        let errno = *libc::__errno_location();
        CAUGHT.store(signal, Ordering::SeqCst);
        let fd = PIPE.load(Ordering::SeqCst);
        if fd >= 0 {
            libc::write(fd, [1u8].as_ptr().cast(), 1);
        }
        *libc::__errno_location() = errno;
    }
}

/// SIGTERM and SIGINT handlers installed for one emulator; restored on drop.
pub struct SignalGuard {
    read: OwnedFd,
    /// The handler's end, held open while the guard is installed.
    _write: OwnedFd,
    previous: [libc::sigaction; 2],
}

impl SignalGuard {
    /// Installs the handlers, or `None` if another emulator of this process holds them.
    pub fn install() -> io::Result<Option<SignalGuard>> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into `fds`.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both were just created and are owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        if PIPE.compare_exchange(-1, write.as_raw_fd(), Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return Ok(None);
        }
        CAUGHT.store(0, Ordering::SeqCst);
        // SAFETY: a zeroed sigaction is a valid value to fill in; sigaction is given valid
        // pointers and a handler of the right signature.
        let previous = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: [libc::sigaction; 2] = std::mem::zeroed();
            for (signal, old) in SIGNALS.iter().zip(previous.iter_mut()) {
                if libc::sigaction(*signal, &action, old) < 0 {
                    let e = io::Error::last_os_error();
                    PIPE.store(-1, Ordering::SeqCst);
                    return Err(e);
                }
            }
            previous
        };
        Ok(Some(SignalGuard { read, _write: write, previous }))
    }

    /// The descriptor that becomes readable when a signal came.
    pub fn fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// The signal caught, if any: "SIGTERM" or "SIGINT".
    pub fn caught(&self) -> Option<&'static str> {
        match CAUGHT.load(Ordering::SeqCst) {
            libc::SIGTERM => Some("SIGTERM"),
            libc::SIGINT => Some("SIGINT"),
            _ => None,
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        // SAFETY: restores the actions saved at install.
        unsafe {
            for (signal, old) in SIGNALS.iter().zip(self.previous.iter()) {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
        PIPE.store(-1, Ordering::SeqCst);
    }
}
