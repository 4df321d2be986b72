//! The ends of an emulated line: TUN/TAP devices, opened here by name or handed over by
//! the caller as a file descriptor (the Python backend opens them in the nodes'
//! namespaces and passes them to a child process).

use std::ffi::c_ulong;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use crate::line::EndKind;

/// linux/if_tun.h: `TUNSETIFF = _IOW('T', 202, int)`, `TUNGETIFF = _IOR('T', 210, unsigned int)`.
const TUNSETIFF: c_ulong = 0x4004_54ca;
const TUNGETIFF: c_ulong = 0x8004_54d2;
/// linux/sockios.h: get the hardware address. The TUN/TAP character device answers it
/// itself with its device's address (drivers/net/tun.c `__tun_chr_ioctl`), so no socket
/// in the device's namespace is needed.
const SIOCGIFHWADDR: c_ulong = 0x8927;
/// linux/if_tun.h: the device's kind and "no packet information" (no 4-byte header).
const IFF_TUN: i16 = 0x0001;
const IFF_TAP: i16 = 0x0002;
const IFF_NO_PI: i16 = 0x1000;
/// IFNAMSIZ (linux/if.h), the terminating NUL included.
const IFNAMSIZ: usize = 16;

/// `struct ifreq` as TUNSETIFF and TUNGETIFF use it: a name and `ifr_flags` at the start
/// of the 24-byte union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    flags: i16,
    _union_rest: [u8; 22],
}

/// A TUN or TAP device's file descriptor, non-blocking.
#[derive(Debug)]
pub struct Device {
    fd: OwnedFd,
    kind: EndKind,
    name: String,
}

impl Device {
    /// Creates (or attaches to) the device `name` in the calling thread's network
    /// namespace, `IFF_TAP | IFF_NO_PI` or `IFF_TUN | IFF_NO_PI`. Needs CAP_NET_ADMIN. A
    /// device this call created goes away when the descriptor is closed.
    pub fn open(name: &str, kind: EndKind) -> io::Result<Device> {
        if name.is_empty() || name.len() >= IFNAMSIZ || name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("device name {name:?}: 1 to {} bytes (IFNAMSIZ)", IFNAMSIZ - 1),
            ));
        }
        // SAFETY: a C string literal; the result is checked.
        let fd = unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(context(io::Error::last_os_error(), "/dev/net/tun"));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq { name: [0; IFNAMSIZ], flags: 0, _union_rest: [0; 22] };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        req.flags = IFF_NO_PI | if kind == EndKind::Tap { IFF_TAP } else { IFF_TUN };
        // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `req` is.
        if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
            return Err(context(io::Error::last_os_error(), &format!("TUNSETIFF {name}")));
        }
        Ok(Device { fd, kind, name: name.to_string() })
    }

    /// The TUN or TAP device open on `fd`, which the caller keeps: this holds a duplicate
    /// of it. The open file is made non-blocking (the caller's descriptor shares that
    /// flag). Refused: a descriptor that is not an attached TUN/TAP device, or one opened
    /// without `IFF_NO_PI`.
    pub fn from_fd(fd: BorrowedFd<'_>) -> io::Result<Device> {
        let raw = fd.as_raw_fd();
        let mut req = IfReq { name: [0; IFNAMSIZ], flags: 0, _union_rest: [0; 22] };
        // SAFETY: TUNGETIFF writes one `struct ifreq`; on any other kind of file it fails.
        if unsafe { libc::ioctl(raw, TUNGETIFF, &mut req) } < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("file descriptor {raw} is not an attached TUN/TAP device (TUNGETIFF: {e})"),
            ));
        }
        let name = String::from_utf8_lossy(&req.name).trim_end_matches('\0').to_string();
        if req.flags & IFF_NO_PI == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("device {name} (fd {raw}) was opened without IFF_NO_PI: open it IFF_TAP | IFF_NO_PI"),
            ));
        }
        let kind = match req.flags & (IFF_TUN | IFF_TAP) {
            IFF_TAP => EndKind::Tap,
            IFF_TUN => EndKind::Tun,
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("device {name} (fd {raw}): unknown TUN/TAP flags {other:#x}"),
                ))
            }
        };
        let fd = fd.try_clone_to_owned()?;
        set_nonblocking(fd.as_raw_fd())?;
        Ok(Device { fd, kind, name })
    }

    pub fn kind(&self) -> EndKind {
        self.kind
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The device's own link address as its kernel has it now (SIOCGIFHWADDR): a TAP's
    /// MAC, which the backend sets after the emulator opened the device.
    pub fn hw_addr(&self) -> io::Result<[u8; 6]> {
        // `struct ifreq`: the name, then `ifr_hwaddr` (a `struct sockaddr`: the family,
        // two bytes, then the address in `sa_data`).
        let mut req = [0u8; IFNAMSIZ + 24];
        // SAFETY: SIOCGIFHWADDR writes at most one `struct ifreq`, which `req` holds.
        if unsafe { libc::ioctl(self.fd.as_raw_fd(), SIOCGIFHWADDR, req.as_mut_ptr()) } < 0 {
            return Err(context(io::Error::last_os_error(), &format!("SIOCGIFHWADDR {}", self.name)));
        }
        Ok(req[IFNAMSIZ + 2..IFNAMSIZ + 8].try_into().expect("six bytes"))
    }

    /// One frame (TAP) or datagram (TUN) the kernel sent out of the device, or
    /// `WouldBlock` when none waits.
    #[inline]
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Hands one frame to the kernel as received on the device.
    #[inline]
    pub fn write(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is valid for `frame.len()` bytes.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

pub(crate) fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on a descriptor the caller holds open.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}
