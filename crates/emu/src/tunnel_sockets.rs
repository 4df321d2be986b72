//! crates/emu `tunnel`: the outer sockets' system calls.

use std::os::fd::FromRawFd;

use super::*;

/// A socket descriptor made non-blocking and close-on-exec, or the error naming it.
pub(super) fn socket(domain: i32, kind: i32, protocol: i32, what: &str) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the result is checked.
    let fd = unsafe { libc::socket(domain, kind | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    // SAFETY: just made, owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if kind == libc::SOCK_RAW {
        let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: setsockopt reads one int. Without CAP_NET_ADMIN it fails and the
        // default buffer stays: not an error.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&RECEIVE_BUFFER as *const libc::c_int).cast(),
                size,
            )
        };
    }
    Ok(fd)
}

/// An `AF_PACKET` socket of EtherType `ethertype` bound to interface `ifname`.
pub(super) fn packet_socket(ifname: &str, ethertype: u16) -> io::Result<(OwnedFd, i32)> {
    let c_name = std::ffi::CString::new(ifname).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: a valid C string.
    let index = unsafe { libc::if_nametoindex(c_name.as_ptr()) };
    if index == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("interface {ifname}: {e}")));
    }
    let fd = socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from(ethertype.to_be()), "AF_PACKET socket")?;
    // SAFETY: a zeroed sockaddr_ll is valid; bind is given its size.
    let rc = unsafe {
        let mut addr: libc::sockaddr_ll = std::mem::zeroed();
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ethertype.to_be();
        addr.sll_ifindex = index as i32;
        libc::bind(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("bind AF_PACKET {ethertype:#06x} on {ifname}: {e}")));
    }
    Ok((fd, index as i32))
}

/// One frame or datagram from a non-blocking socket with the packet type of its
/// `sockaddr_ll` (0 for an IPv4 socket), or None when none waits.
pub(super) fn receive(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<(usize, u8)>> {
    // SAFETY: `buf` is valid for its length; `addr` is a zeroed sockaddr_ll large enough
    // for both address families used here.
    unsafe {
        let mut addr: libc::sockaddr_ll = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        let n = libc::recvfrom(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            0,
            (&mut addr as *mut libc::sockaddr_ll).cast(),
            &mut len,
        );
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(None) } else { Err(e) };
        }
        let pkttype = if i32::from(addr.sll_family) == libc::AF_PACKET { addr.sll_pkttype } else { 0 };
        Ok(Some((n as usize, pkttype)))
    }
}

pub(super) fn send_to(fd: RawFd, packet: &[u8], dst: Ipv4Addr) -> io::Result<()> {
    // SAFETY: a zeroed sockaddr_in filled in; `packet` is valid for its length.
    let n = unsafe {
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as u16;
        addr.sin_addr.s_addr = u32::from(dst).to_be();
        libc::sendto(
            fd,
            packet.as_ptr().cast(),
            packet.len(),
            0,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The MTU of the kernel's route to `dst` (a UDP socket connected to it, `IP_MTU`,
/// ip(7)).
pub(crate) fn route_mtu(dst: Ipv4Addr) -> io::Result<usize> {
    let fd = socket(libc::AF_INET, libc::SOCK_DGRAM, 0, "UDP socket")?;
    // SAFETY: a zeroed sockaddr_in filled in; getsockopt writes one int.
    unsafe {
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as u16;
        addr.sin_port = 9u16.to_be(); // any port: connect only picks the route
        addr.sin_addr.s_addr = u32::from(dst).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::connect(fd.as_raw_fd(), (&addr as *const libc::sockaddr_in).cast(), len) < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("no route to {dst}: {e}")));
        }
        let mut mtu: libc::c_int = 0;
        let mut size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        if libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MTU,
            (&mut mtu as *mut libc::c_int).cast(),
            &mut size,
        ) < 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(mtu as usize)
    }
}

/// Frames a packet socket's receive queue had no room for, since the socket was made
/// (`PACKET_STATISTICS`, read once).
pub(super) fn packet_drops(fd: RawFd) -> u64 {
    let mut stats = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
    let mut size = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: getsockopt writes one tpacket_stats.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            (&mut stats as *mut libc::tpacket_stats).cast(),
            &mut size,
        )
    };
    if rc < 0 {
        0
    } else {
        u64::from(stats.tp_drops)
    }
}

/// Datagrams a raw IPv4 socket's receive queue had no room for: the `drops` column of
/// its line (found by inode) in the namespace's `/proc/net/raw`.
pub(super) fn raw_drops(fd: RawFd) -> u64 {
    // SAFETY: fstat writes one stat.
    let inode = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) < 0 {
            return 0;
        }
        st.st_ino
    };
    let Ok(table) = std::fs::read_to_string("/proc/self/net/raw") else { return 0 };
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() >= 13 && f[9].parse::<u64>().ok() == Some(inode))
        .and_then(|f| f.last().and_then(|d| d.parse().ok()))
        .unwrap_or(0)
}

/// A raw IPv4 socket of `protocol` bound to `local` (only datagrams to it, and sent from
/// it), marked `mark` if given.
pub(super) fn bound_raw(protocol: i32, local: Ipv4Addr, mark: Option<u32>) -> io::Result<OwnedFd> {
    let fd = socket(libc::AF_INET, libc::SOCK_RAW, protocol, &format!("raw IPv4 socket of protocol {protocol}"))?;
    // SAFETY: a zeroed sockaddr_in filled in; setsockopt reads one u32.
    unsafe {
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as u16;
        addr.sin_addr.s_addr = u32::from(local).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_in).cast(), len) < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("bind raw socket to {local}: {e}")));
        }
        if let Some(mark) = mark {
            let size = std::mem::size_of::<u32>() as libc::socklen_t;
            if libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_MARK, (&mark as *const u32).cast(), size) < 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(fd)
}
