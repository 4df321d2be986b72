//! A small nfnetlink_queue client (netlink with libc; no crate on crates.io was both
//! pure Rust and kept up, and the protocol is four messages): it binds one queue of the
//! calling thread's namespace, reads the packets nftables queues to it with their
//! whole payload, and returns a verdict for each, with a replaced payload and mark if
//! given.
//!
//! The messages and attributes are those of `include/uapi/linux/netfilter/nfnetlink_queue.h`
//! and `nfnetlink.h`; integers inside nfnetlink attributes are big-endian, the netlink
//! header's are the host's.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// netlink(7): the netfilter family.
const NETLINK_NETFILTER: i32 = 12;
/// nfnetlink.h: the queue subsystem, the high byte of a message type.
const NFNL_SUBSYS_QUEUE: u16 = 3;
/// nfnetlink_queue.h: `enum nfqnl_msg_types`.
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
/// nfnetlink_queue.h: `enum nfqnl_attr_config`.
const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
/// nfnetlink_queue.h: `enum nfqnl_msg_config_cmds`.
const NFQNL_CFG_CMD_BIND: u8 = 1;
/// nfnetlink_queue.h: `enum nfqnl_config_mode`: the whole packet.
const NFQNL_COPY_PACKET: u8 = 2;
/// nfnetlink_queue.h: `enum nfqnl_attr_type`.
const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_MARK: u16 = 3;
const NFQA_PAYLOAD: u16 = 10;
/// netfilter.h: verdicts.
pub const NF_DROP: u32 = 0;
pub const NF_ACCEPT: u32 = 1;
/// netfilter_ipv4.h: the hooks a packet can come from.
pub const NF_INET_PRE_ROUTING: u8 = 0;
pub const NF_INET_LOCAL_OUT: u8 = 3;

const NLMSG_HDRLEN: usize = 16;
const NFGENMSG_LEN: usize = 4;

/// One queued packet.
#[derive(Debug)]
pub struct Queued<'a> {
    /// The kernel's id of the packet, which its verdict names.
    pub id: u32,
    /// The hook it was queued at ([`NF_INET_LOCAL_OUT`], [`NF_INET_PRE_ROUTING`]).
    pub hook: u8,
    /// The IPv4 datagram.
    pub payload: &'a [u8],
}

/// A netlink socket bound to one queue.
pub struct Queue {
    fd: OwnedFd,
    number: u16,
    seq: u32,
}

fn align(n: usize) -> usize {
    (n + 3) & !3
}

fn attr(out: &mut Vec<u8>, kind: u16, value: &[u8]) {
    out.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize(align(out.len()), 0);
}

impl Queue {
    /// Binds queue `number` of this namespace, copying whole packets (up to 65 535
    /// octets), with a receive buffer of `rcvbuf` octets.
    pub fn bind(number: u16, rcvbuf: i32) -> io::Result<Queue> {
        // SAFETY: plain socket(2); the result is checked.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, NETLINK_NETFILTER) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("netfilter netlink socket: {e}")));
        }
        // SAFETY: just made, owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a zeroed sockaddr_nl is the kernel's choice of port id; setsockopt
        // reads one int (without CAP_NET_ADMIN the default buffer stays).
        unsafe {
            let mut addr: libc::sockaddr_nl = std::mem::zeroed();
            addr.nl_family = libc::AF_NETLINK as u16;
            let len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
            if libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_nl).cast(), len) < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&rcvbuf as *const i32).cast(),
                std::mem::size_of::<i32>() as libc::socklen_t,
            );
        }
        let mut queue = Queue { fd, number, seq: 0 };
        // struct nfqnl_msg_config_cmd { __u8 command; __u8 _pad; __be16 pf; }
        let pf = (libc::AF_INET as u16).to_be_bytes();
        queue.config(NFQA_CFG_CMD, &[NFQNL_CFG_CMD_BIND, 0, pf[0], pf[1]]).map_err(|e| {
            io::Error::new(e.kind(), format!("bind nfqueue {number}: {e} (is nfnetlink_queue in this kernel?)"))
        })?;
        // struct nfqnl_msg_config_params { __be32 copy_range; __u8 copy_mode; } (packed)
        let mut params = 0xffffu32.to_be_bytes().to_vec();
        params.push(NFQNL_COPY_PACKET);
        queue
            .config(NFQA_CFG_PARAMS, &params)
            .map_err(|e| io::Error::new(e.kind(), format!("nfqueue copy mode: {e}")))?;
        // SAFETY: fcntl on our own descriptor.
        unsafe {
            let flags = libc::fcntl(queue.fd.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(queue.fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Ok(queue)
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// A message of the queue subsystem: netlink header, nfgenmsg (AF_UNSPEC, version 0,
    /// the queue number) and `attrs`.
    fn message(&mut self, kind: u16, flags: u16, attrs: &[u8]) -> Vec<u8> {
        self.seq = self.seq.wrapping_add(1);
        let len = NLMSG_HDRLEN + NFGENMSG_LEN + attrs.len();
        let mut m = Vec::with_capacity(len);
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | kind).to_ne_bytes());
        m.extend_from_slice(&(flags | libc::NLM_F_REQUEST as u16).to_ne_bytes());
        m.extend_from_slice(&self.seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]);
        m.extend_from_slice(&self.number.to_be_bytes());
        m.extend_from_slice(attrs);
        m
    }

    fn send(&self, m: &[u8]) -> io::Result<()> {
        // SAFETY: `m` is valid for its length; the kernel is the destination (pid 0).
        let n = unsafe {
            let mut addr: libc::sockaddr_nl = std::mem::zeroed();
            addr.nl_family = libc::AF_NETLINK as u16;
            libc::sendto(
                self.fd.as_raw_fd(),
                m.as_ptr().cast(),
                m.len(),
                0,
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// A config message, acknowledged (the socket still blocks here).
    fn config(&mut self, kind: u16, value: &[u8]) -> io::Result<()> {
        let mut attrs = Vec::new();
        attr(&mut attrs, kind, value);
        let m = self.message(NFQNL_MSG_CONFIG, libc::NLM_F_ACK as u16, &attrs);
        self.send(&m)?;
        let mut buf = [0u8; 1024];
        // SAFETY: `buf` is valid for its length.
        let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        // NLMSG_ERROR (2): an int error after the header, 0 for the acknowledgement.
        let n = n as usize;
        if n >= NLMSG_HDRLEN + 4 && u16::from_ne_bytes([buf[4], buf[5]]) == libc::NLMSG_ERROR as u16 {
            let err = i32::from_ne_bytes([buf[16], buf[17], buf[18], buf[19]]);
            if err != 0 {
                return Err(io::Error::from_raw_os_error(-err));
            }
        }
        Ok(())
    }

    /// Reads what waits into `buf` and calls `each` for every queued packet in it;
    /// Ok(false) when nothing waited. ENOBUFS (the socket's buffer overflowed: the
    /// kernel dropped packets it could not queue to us) is returned as an error of
    /// that kind for the caller to count.
    pub fn read(&self, buf: &mut [u8], mut each: impl FnMut(Queued<'_>)) -> io::Result<bool> {
        // SAFETY: `buf` is valid for its length.
        let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::WouldBlock { Ok(false) } else { Err(e) };
        }
        let data = &buf[..n as usize];
        let mut at = 0;
        while at + NLMSG_HDRLEN <= data.len() {
            let len = u32::from_ne_bytes(data[at..at + 4].try_into().expect("4 octets")) as usize;
            let kind = u16::from_ne_bytes([data[at + 4], data[at + 5]]);
            if len < NLMSG_HDRLEN || at + len > data.len() {
                break;
            }
            if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET {
                let mut id = None;
                let mut hook = 0;
                let mut payload: &[u8] = &[];
                let mut a = at + NLMSG_HDRLEN + NFGENMSG_LEN;
                while a + 4 <= at + len {
                    let alen = usize::from(u16::from_ne_bytes([data[a], data[a + 1]]));
                    let akind = u16::from_ne_bytes([data[a + 2], data[a + 3]]) & 0x3fff;
                    if alen < 4 || a + alen > at + len {
                        break;
                    }
                    let value = &data[a + 4..a + alen];
                    match akind {
                        // struct nfqnl_msg_packet_hdr { __be32 packet_id; __be16 hw_protocol; __u8 hook; }
                        NFQA_PACKET_HDR if value.len() >= 7 => {
                            id = Some(u32::from_be_bytes(value[..4].try_into().expect("4 octets")));
                            hook = value[6];
                        }
                        NFQA_PAYLOAD => payload = value,
                        _ => {}
                    }
                    a += align(alen);
                }
                if let Some(id) = id {
                    each(Queued { id, hook, payload });
                }
            }
            at += align(len);
        }
        Ok(true)
    }

    /// The verdict on packet `id`; with `payload` the packet is replaced by it, with
    /// `mark` its firewall mark is set (a packet from the output hook whose mark
    /// changed is routed again, `ip_route_me_harder`).
    pub fn verdict(&mut self, id: u32, verdict: u32, payload: Option<&[u8]>, mark: Option<u32>) -> io::Result<()> {
        let mut attrs = Vec::with_capacity(32 + payload.map_or(0, <[u8]>::len));
        // struct nfqnl_msg_verdict_hdr { __be32 verdict; __be32 id; }
        let mut hdr = verdict.to_be_bytes().to_vec();
        hdr.extend_from_slice(&id.to_be_bytes());
        attr(&mut attrs, NFQA_VERDICT_HDR, &hdr);
        if let Some(mark) = mark {
            attr(&mut attrs, NFQA_MARK, &mark.to_be_bytes());
        }
        if let Some(p) = payload {
            attr(&mut attrs, NFQA_PAYLOAD, p);
        }
        let m = self.message(NFQNL_MSG_VERDICT, 0, &attrs);
        self.send(&m)
    }
}
