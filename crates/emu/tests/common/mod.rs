//! A two-namespace lab for the emulator's tests: namespaces `qoslab-t-<pid>-<n>-{a,b}`
//! made by the test, one device in each, the emulator between them, packet sockets with
//! kernel timestamps (SO_TIMESTAMPNS) on the devices. Everything goes when the lab is
//! dropped, a failed test's included (a namespace's devices die with it or with the
//! emulator's descriptors). Needs root and /dev/net/tun: without them a test says why it
//! is skipped.

#![allow(dead_code)]

use std::fs::File;
use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

use emu::device::Device;
use emu::line::EndKind;
use emu::{emulate, Options, Report};
use sim::config::LinkConfig;

/// One lab at a time: the timing of one should not suffer from another's traffic.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
static NEXT: AtomicU32 = AtomicU32::new(0);

/// A network namespace the test made; deleted on drop.
pub struct Netns {
    pub name: String,
    file: File,
}

impl Netns {
    fn new(name: &str) -> Result<Netns, String> {
        let out = Command::new("ip").args(["netns", "add", name]).output().map_err(|e| format!("ip: {e}"))?;
        if !out.status.success() {
            return Err(format!("ip netns add {name}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let file = File::open(format!("/run/netns/{name}")).map_err(|e| format!("/run/netns/{name}: {e}"))?;
        Ok(Netns { name: name.to_string(), file })
    }

    /// `ip -n NAME ARGS`, which must succeed.
    pub fn ip(&self, args: &[&str]) {
        let out = Command::new("ip").arg("-n").arg(&self.name).args(args).output().expect("ip runs");
        assert!(out.status.success(), "ip -n {} {args:?}: {}", self.name, String::from_utf8_lossy(&out.stderr));
    }

    /// `ip netns exec NAME CMD...`: its standard output.
    pub fn exec(&self, cmd: &[&str]) -> String {
        let out = Command::new("ip").args(["netns", "exec", &self.name]).args(cmd).output().expect("ip runs");
        assert!(out.status.success(), "{cmd:?} in {}: {}", self.name, String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `f` on a thread that has entered this namespace; sockets and devices it
    /// opens belong to the namespace.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: setns on a namespace file this struct holds open; it changes
                // only this (short-lived) thread's network namespace.
                let r = unsafe { libc::setns(self.file.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(r, 0, "setns {}: {}", self.name, io::Error::last_os_error());
                f()
            })
            .join()
            .expect("the namespace thread")
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).output();
    }
}

/// Why this machine cannot run the lab, if it cannot.
fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: namespaces and TAP devices need CAP_NET_ADMIN".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    None
}

/// Two namespaces, a device in each (`qoslab-t-a` in `a`, `qoslab-t-b` in `b`) with
/// addresses 10.200.N.1/24 and 10.200.N.2/24 and MACs 02:00:00:00:N:0a / :0b, up.
pub struct Lab {
    _serial: std::sync::MutexGuard<'static, ()>,
    pub a: Netns,
    pub b: Netns,
    pub addr_a: String,
    pub addr_b: String,
    pub mac_a: [u8; 6],
    pub mac_b: [u8; 6],
    devices: Option<[Device; 2]>,
}

pub const DEV_A: &str = "qoslab-t-a";
pub const DEV_B: &str = "qoslab-t-b";

impl Lab {
    /// A lab with TAP devices (or TUN with `kind`), or `None` (the reason printed) where
    /// namespaces cannot be made here. `arp` false: the devices do not ARP (a serial line).
    pub fn new(kind: EndKind, arp: bool) -> Option<Lab> {
        let serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = unavailable() {
            eprintln!("skipped: {why}");
            return None;
        }
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let stem = format!("qoslab-t-{}-{n}", std::process::id());
        let a = match Netns::new(&format!("{stem}-a")) {
            Ok(ns) => ns,
            Err(e) => {
                eprintln!("skipped: network namespaces cannot be made here ({e})");
                return None;
            }
        };
        let b = Netns::new(&format!("{stem}-b")).expect("the second namespace");
        let subnet = n % 250;
        let mac = |end: u8| [0x02, 0, 0, 0, subnet as u8, end];
        let (mac_a, mac_b) = (mac(0x0a), mac(0x0b));
        let mut devices = Vec::new();
        for (ns, dev, mac, host) in [(&a, DEV_A, mac_a, 1), (&b, DEV_B, mac_b, 2)] {
            // No IPv6 (no router or neighbour solicitations crossing the line unasked).
            ns.run(|| {
                for knob in ["all", "default"] {
                    std::fs::write(format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6"), "1").expect("sysctl");
                }
            });
            devices.push(ns.run(|| Device::open(dev, kind)).expect("a TUN/TAP device in the namespace"));
            ns.ip(&["link", "set", "lo", "up"]);
            if kind == EndKind::Tap {
                let mac = mac.map(|b| format!("{b:02x}")).join(":");
                ns.ip(&["link", "set", dev, "address", &mac]);
            }
            if !arp {
                ns.ip(&["link", "set", dev, "arp", "off"]);
            }
            ns.ip(&["addr", "add", &format!("10.200.{subnet}.{host}/24"), "dev", dev]);
            ns.ip(&["link", "set", dev, "up"]);
        }
        let devices: [Device; 2] = devices.try_into().expect("two devices");
        Some(Lab {
            _serial: serial,
            a,
            b,
            addr_a: format!("10.200.{subnet}.1"),
            addr_b: format!("10.200.{subnet}.2"),
            mac_a,
            mac_b,
            devices: Some(devices),
        })
    }

    /// Static neighbour entries both ways, so no ARP crosses the line.
    pub fn static_neighbours(&self) {
        let mac = |m: [u8; 6]| m.map(|b| format!("{b:02x}")).join(":");
        self.a.ip(&["neigh", "replace", &self.addr_b, "lladdr", &mac(self.mac_b), "dev", DEV_A, "nud", "permanent"]);
        self.b.ip(&["neigh", "replace", &self.addr_a, "lladdr", &mac(self.mac_a), "dev", DEV_B, "nud", "permanent"]);
    }

    /// The two devices, for a test that reads them itself (no emulator then).
    pub fn take_devices(&mut self) -> [Device; 2] {
        self.devices.take().expect("the devices, once")
    }

    /// Starts the emulator of `link` between the two devices, on a thread of its own.
    pub fn emulate(&mut self, link: LinkConfig, seed: u64) -> Running {
        let devices = self.devices.take().expect("one emulator per lab");
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both just made, owned by nothing else.
        let (stop_r, stop_w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let handle = std::thread::spawn(move || {
            let [da, db] = &devices;
            emulate(&link, seed, 0, [da, db], Some(stop_r.as_fd()), &Options::default()).expect("the emulator runs")
        });
        Running { stop: Some(stop_w), handle: Some(handle) }
    }
}

/// A running emulator; stopped by [`Running::stop`], or (a failed test) when dropped:
/// its stop pipe then closes.
pub struct Running {
    stop: Option<OwnedFd>,
    handle: Option<JoinHandle<Report>>,
}

impl Running {
    pub fn stop(mut self) -> Report {
        let stop = self.stop.take().expect("running");
        // SAFETY: a one-byte write to a pipe we own.
        assert_eq!(unsafe { libc::write(stop.as_raw_fd(), [1u8].as_ptr().cast(), 1) }, 1);
        let report = self.handle.take().expect("running").join().expect("the emulator thread");
        assert_eq!(report.stopped_by, "stop fd");
        report
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A frame a packet socket saw: kernel timestamp (CLOCK_REALTIME, ns), whether it was
/// going out of the device (PACKET_OUTGOING) or coming in, and its bytes.
#[derive(Debug, Clone)]
pub struct Seen {
    pub t_ns: i128,
    pub outgoing: bool,
    pub bytes: Vec<u8>,
}

/// An AF_PACKET socket on one device, every protocol, with kernel receive timestamps.
pub struct Capture {
    fd: OwnedFd,
}

impl Capture {
    /// Opens it in `ns` on `dev`, with a 32 MB buffer so a test's frames wait for it.
    pub fn open(ns: &Netns, dev: &str) -> Capture {
        ns.run(|| {
            let proto = (libc::ETH_P_ALL as u16).to_be() as i32;
            // SAFETY: plain socket calls with checked results and valid pointers.
            unsafe {
                let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto);
                assert!(fd >= 0, "packet socket: {}", io::Error::last_os_error());
                let fd = OwnedFd::from_raw_fd(fd);
                let on: libc::c_int = 1;
                let size: libc::c_int = 32 << 20;
                let opt = |level, name, v: &libc::c_int| {
                    let r = libc::setsockopt(fd.as_raw_fd(), level, name, (v as *const libc::c_int).cast(), 4);
                    assert_eq!(r, 0, "setsockopt {name}: {}", io::Error::last_os_error());
                };
                opt(libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &on);
                opt(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size);
                let name = std::ffi::CString::new(dev).unwrap();
                let index = libc::if_nametoindex(name.as_ptr());
                assert!(index > 0, "no device {dev}");
                let mut sll: libc::sockaddr_ll = std::mem::zeroed();
                sll.sll_family = libc::AF_PACKET as u16;
                sll.sll_protocol = proto as u16;
                sll.sll_ifindex = index as i32;
                let r = libc::bind(
                    fd.as_raw_fd(),
                    (&sll as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                );
                assert_eq!(r, 0, "bind: {}", io::Error::last_os_error());
                Capture { fd }
            }
        })
    }

    /// Every frame seen so far, in the order the socket got them.
    pub fn drain(&self) -> Vec<Seen> {
        let mut seen = Vec::new();
        let mut buf = vec![0u8; 65_536];
        loop {
            match recv_timestamped(self.fd.as_raw_fd(), &mut buf) {
                Ok(s) => seen.push(s),
                // The device went with the emulator's descriptor: the socket says so
                // once, and still holds what it got before.
                Err(e) if e.raw_os_error() == Some(libc::ENETDOWN) => continue,
                Err(e) => {
                    assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "recvmsg: {e}");
                    return seen;
                }
            }
        }
    }
}

fn recv_timestamped(fd: RawFd, buf: &mut [u8]) -> io::Result<Seen> {
    // SAFETY: recvmsg with an iovec over `buf`, a sockaddr_ll and a control buffer, all
    // valid for their lengths; the control messages are walked with the libc macros.
    unsafe {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        let mut control = [0u8; 256];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len();
        let n = libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut t_ns = None;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                t_ns = Some(ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok(Seen {
            t_ns: t_ns.expect("SO_TIMESTAMPNS gives every frame a timestamp"),
            outgoing: sll.sll_pkttype == libc::PACKET_OUTGOING,
            bytes: buf[..n as usize].to_vec(),
        })
    }
}

/// A UDP socket bound in `ns` to `addr:port`.
pub fn udp(ns: &Netns, addr: &str, port: u16) -> UdpSocket {
    ns.run(|| UdpSocket::bind((addr, port)).expect("a UDP socket"))
}

/// The UDP payload of an Ethernet frame (IPv4, no options), if it is UDP to `port`.
pub fn udp_payload(frame: &[u8], port: u16) -> Option<&[u8]> {
    let ip = frame.get(14..)?;
    if frame.get(12..14)? != [0x08, 0x00] || ip[0] != 0x45 || ip[9] != 17 {
        return None;
    }
    let udp = ip.get(20..)?;
    (u16::from_be_bytes([udp[2], udp[3]]) == port).then(|| &udp[8..])
}

/// The `q`-quantile of `values` (nearest rank).
pub fn quantile(values: &[i64], q: f64) -> i64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}
