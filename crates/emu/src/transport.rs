//! IPsec transport mode on the emulation backend (issue 17): a transport-mode SA
//! (crates/sim's own [`sim::tunnel::ipsec::IpsecTransport`], built as every tunnel end is,
//! [`crate::tunnel`]) transforms the kernel's own datagrams, which no TUN device sees, so
//! nftables in the node's namespace queues them to it through NFQUEUE
//! ([`crate::nfqueue`]) and it returns each protected or restored.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Instant;

use sim::config::NodeConfig;
use sim::tunnel::TunnelEnd;
use wire::ipv4;

use crate::nfqueue::{Queue, Queued, NF_ACCEPT, NF_DROP, NF_INET_LOCAL_OUT, NF_INET_PRE_ROUTING};
use crate::signal::SignalGuard;
use crate::tunnel::say;
use crate::tunnel::sockets::route_mtu;
use crate::tunnel::{Count, TunnelOptions, TunnelReport, BUFFER, NFQUEUE_FULL, RECEIVE_BUFFER};
use crate::Error;

/// The NFQUEUE queue number of transport-mode SA `name` of `node`: its index in the
/// node's `ipsec` list (queues are per namespace; python/qoslab/backends/emu/tunnels.py
/// queues the SA's packets to the same number).
pub fn transport_queue(node: &NodeConfig, name: &str) -> Option<u16> {
    node.ipsec.iter().position(|c| c.name == name).and_then(|i| u16::try_from(i).ok())
}

/// A verdict to give: the packet's id, NF_ACCEPT or NF_DROP, the replacing datagram and
/// mark if any.
type Verdict = (u32, u32, Option<Vec<u8>>, Option<u32>);

/// Runs transport-mode SA `name` (crates/sim's [`sim::tunnel::ipsec::IpsecTransport`])
/// on the kernel's own datagrams, through NFQUEUE: nftables in the namespace queues the
/// node's outgoing datagrams the SA selects (output hook) and the incoming ESP/AH from
/// its far end (prerouting, before conntrack) to queue [`transport_queue`]. An outgoing
/// datagram the SA selects is replaced by its protected datagram ([`TunnelEnd::protect`];
/// DF cleared when it no longer fits the route's MTU, as the simulator's stack does,
/// RFC 4303 §3.1.1: the kernel fragments it after the transform), an incoming one the
/// SA claims by the restored datagram ([`TunnelEnd::unprotect`]) or dropped with the
/// model's reason; anything else is accepted as it is. Prints `ready` and `up` as
/// [`run_tunnel`] does.
pub(crate) fn run_transport(
    node: &NodeConfig,
    name: &str,
    mut end: Box<dyn TunnelEnd>,
    stop: Option<BorrowedFd<'_>>,
    notify: Option<BorrowedFd<'_>>,
    options: &TunnelOptions,
) -> Result<TunnelReport, Error> {
    let number = transport_queue(node, name).expect("a transport-mode SA is in the node's ipsec list");
    let remote = node.ipsec[usize::from(number)].remote;
    let outer_mtu = route_mtu(remote)?;
    let mut queue = Queue::bind(number, RECEIVE_BUFFER)?;
    let signals = if options.stop_on_signals { SignalGuard::install()? } else { None };
    let mut report = TunnelReport::new(node, name, "ipsec-transport", &format!("nfqueue {number}"), "ip".into());
    // Its datagrams are protected from the first: no negotiation to wait for.
    report.up_after_ns = Some(0);
    say(notify, b"ready\n");
    say(notify, b"up\n");
    let start = Instant::now();
    let mut buf = vec![0u8; BUFFER];
    let stopped_by = loop {
        let mut fds: Vec<libc::pollfd> =
            [Some(queue.fd()), stop.map(|s| s.as_raw_fd()), signals.as_ref().map(SignalGuard::fd)]
                .into_iter()
                .map(|fd| libc::pollfd { fd: fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 })
                .collect();
        // SAFETY: `fds` holds initialised pollfds; no timeout (the SA has no timer).
        let n = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, std::ptr::null(), std::ptr::null()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break format!("ppoll: {e}");
        }
        if fds[2].revents != 0 {
            break signals.as_ref().and_then(SignalGuard::caught).unwrap_or("signal").to_string();
        }
        if fds[1].revents != 0 {
            break if fds[1].revents & libc::POLLIN != 0 { "stop fd" } else { "stop fd closed" }.to_string();
        }
        if fds[0].revents & libc::POLLIN == 0 {
            continue;
        }
        if let Err(e) = drain(&mut queue, &mut buf, &mut *end, &mut report, outer_mtu) {
            return Err(Error::Io(e));
        }
    };
    report.duration_ns = start.elapsed().as_nanos() as u64;
    report.stopped_by = stopped_by;
    let lost = queue_drops(number);
    if lost > 0 {
        report.dropped.insert(NFQUEUE_FULL.into(), Count { packets: lost, bytes: 0 });
    }
    drop(queue);
    Ok(report)
}

/// What the kernel dropped for want of room in queue `number` or in our socket
/// (/proc/net/netfilter/nfnetlink_queue: queue_dropped and user_dropped, columns 6 and
/// 7, of this namespace's queue), read with the queue still bound.
fn queue_drops(number: u16) -> u64 {
    std::fs::read_to_string("/proc/self/net/netfilter/nfnetlink_queue")
        .ok()
        .and_then(|t| {
            t.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).find_map(|f| {
                (f.len() >= 7 && f[0].parse::<u16>().ok() == Some(number))
                    .then(|| f[5].parse::<u64>().unwrap_or(0) + f[6].parse::<u64>().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

/// Reads every packet waiting on `queue` and gives each its verdict ([`judge`]).
fn drain(
    queue: &mut Queue,
    buf: &mut [u8],
    end: &mut dyn TunnelEnd,
    report: &mut TunnelReport,
    outer_mtu: usize,
) -> io::Result<()> {
    loop {
        let mut verdicts: Vec<Verdict> = Vec::new();
        let read = queue.read(buf, |q| verdicts.push(judge(end, report, &q, outer_mtu)));
        for (id, verdict, payload, mark) in verdicts {
            if let Err(e) = queue.verdict(id, verdict, payload.as_deref(), mark) {
                report.drop(format!("verdict: {e}"), payload.map_or(0, |p| p.len()));
            }
        }
        match read {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            // The socket's buffer overflowed: the kernel dropped what it could not
            // queue to us, and counts them ([`queue_drops`]).
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The verdict on one queued datagram, counted in `report` (docs/metrics.md).
fn judge(end: &mut dyn TunnelEnd, report: &mut TunnelReport, q: &Queued<'_>, outer_mtu: usize) -> Verdict {
    let len = q.payload.len();
    let mut out = Vec::with_capacity(len + 64);
    if q.hook == NF_INET_LOCAL_OUT && end.selects(q.payload) {
        report.inner_in.add(len);
        match end.protect(q.payload, &mut out) {
            // The attribute that carries it has a 16-bit length, its 4-octet header included.
            Ok(()) if out.len() + 4 <= usize::from(u16::MAX) => {
                let too_big = out.len() > outer_mtu;
                let mut view = ipv4::Packet::new_unchecked(&mut out[..]);
                if too_big && view.dont_frag() {
                    view.set_dont_frag(false);
                    view.fill_checksum();
                }
                report.outer_out.add(out.len());
                (q.id, NF_ACCEPT, Some(out), None)
            }
            Ok(()) => {
                report.drop("protected datagram above 65531 octets".into(), len);
                (q.id, NF_DROP, None, None)
            }
            Err(reason) => {
                report.drop(reason, len);
                (q.id, NF_DROP, None, None)
            }
        }
    } else if q.hook == NF_INET_PRE_ROUTING && end.claims(q.payload) {
        report.outer_in.add(len);
        match end.unprotect(q.payload, &mut out) {
            Ok(()) => {
                report.inner_out.add(out.len());
                (q.id, NF_ACCEPT, Some(out), None)
            }
            Err(reason) => {
                report.drop(reason, len);
                (q.id, NF_DROP, None, None)
            }
        }
    } else {
        // Queued by a rule broader than the model's selector: not this SA's.
        report.outer_not_mine.add(len);
        (q.id, NF_ACCEPT, None, None)
    }
}
