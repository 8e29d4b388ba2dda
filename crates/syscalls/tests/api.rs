//! Names, classification and the written ranges of representative syscalls.

mod common;

use common::{FakeMem, NoMem};
use hindsight_syscalls::{
    classify, is_error, is_interrupted, name, number, writes, Replay, SyscallError, Written,
};

fn nr(n: &str) -> u64 {
    number(n).unwrap_or_else(|| panic!("no syscall {n}"))
}

fn w(addr: u64, len: usize) -> Written {
    Written { addr, len }
}

fn args(a: &[u64]) -> [u64; 6] {
    let mut r = [0; 6];
    r[..a.len()].copy_from_slice(a);
    r
}

fn wr(n: &str, a: &[u64], result: i64, mem: &dyn hindsight_syscalls::Memory) -> Vec<Written> {
    writes(nr(n), &args(a), result, mem).unwrap_or_else(|e| panic!("{n}: {e}"))
}

#[test]
fn names_and_numbers() {
    for (n, s) in [
        (0, "read"),
        (1, "write"),
        (2, "open"),
        (3, "close"),
        (9, "mmap"),
        (56, "clone"),
        (59, "execve"),
        (60, "exit"),
        (202, "futex"),
        (231, "exit_group"),
        (257, "openat"),
        (262, "newfstatat"),
        (318, "getrandom"),
        (332, "statx"),
        (334, "rseq"),
        (424, "pidfd_send_signal"),
        (435, "clone3"),
        (439, "faccessat2"),
        (450, "set_mempolicy_home_node"),
        (462, "mseal"),
    ] {
        assert_eq!(name(n), Some(s), "name({n})");
        assert_eq!(number(s), Some(n), "number({s})");
    }
    assert_eq!(name(337), None);
    assert_eq!(name(423), None);
    assert_eq!(name(512), None);
    assert_eq!(name(u64::MAX), None);
    assert_eq!(number("no_such_syscall"), None);
    assert_eq!(number(""), None);
}

#[test]
fn names_agree_with_libc() {
    let known: &[(i64, &str)] = &[
        (libc::SYS_read, "read"),
        (libc::SYS_pread64, "pread64"),
        (libc::SYS_sendfile, "sendfile"),
        (libc::SYS_getdents64, "getdents64"),
        (libc::SYS_epoll_pwait2, "epoll_pwait2"),
        (libc::SYS_process_madvise, "process_madvise"),
        (libc::SYS_futex_waitv, "futex_waitv"),
        (libc::SYS_fchmodat2, "fchmodat2"),
        (libc::SYS_mseal, "mseal"),
        (libc::SYS_pkey_free, "pkey_free"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
    ];
    for (n, s) in known {
        assert_eq!(name(*n as u64), Some(*s));
    }
}

#[test]
fn every_name_round_trips() {
    let mut count = 0;
    for n in 0..1024u64 {
        if let Some(s) = name(n) {
            assert_eq!(number(s), Some(n), "{s}");
            count += 1;
        }
    }
    assert!(count > 370, "{count}");
}

#[test]
fn classification() {
    let z = [0u64; 6];
    for s in [
        "mmap",
        "munmap",
        "mprotect",
        "mremap",
        "brk",
        "madvise",
        "clone",
        "clone3",
        "fork",
        "vfork",
        "execve",
        "execveat",
        "exit",
        "exit_group",
        "set_tid_address",
        "set_robust_list",
        "rt_sigaction",
        "rt_sigprocmask",
        "rt_sigreturn",
        "sigaltstack",
        "personality",
    ] {
        assert_eq!(classify(nr(s), &z), Ok(Replay::Execute), "{s}");
    }
    for s in [
        "read",
        "write",
        "openat",
        "close",
        "fstat",
        "newfstatat",
        "statx",
        "getrandom",
        "clock_gettime",
        "getpid",
        "gettid",
        "poll",
        "epoll_wait",
        "wait4",
        "recvmsg",
        "getdents64",
        "lseek",
        "pipe2",
        "socket",
        "connect",
        "sched_yield",
        "nanosleep",
        "futex",
        "sched_getaffinity",
        "uname",
        "getcwd",
        "readlink",
        "prlimit64",
    ] {
        assert_eq!(classify(nr(s), &z), Ok(Replay::Emulate), "{s}");
    }
    assert_eq!(classify(nr("rseq"), &z), Ok(Replay::Deny(libc::ENOSYS)));
    // arch_prctl(ARCH_SET_FS)
    assert_eq!(
        classify(nr("arch_prctl"), &args(&[0x1002, 0x1000])),
        Ok(Replay::Execute)
    );
    // prctl(PR_SET_NAME) / prctl(PR_GET_NAME)
    assert_eq!(
        classify(nr("prctl"), &args(&[15, 0x1000])),
        Ok(Replay::Execute)
    );
    assert_eq!(
        classify(nr("prctl"), &args(&[16, 0x1000])),
        Ok(Replay::Emulate)
    );
    // prctl(PR_SET_VMA)
    assert_eq!(
        classify(nr("prctl"), &args(&[0x5356_4d41, 0])),
        Ok(Replay::Execute)
    );
}

#[test]
fn unknown_things_are_named() {
    let z = [0u64; 6];
    let e = classify(999, &z).unwrap_err();
    assert_eq!(
        e,
        SyscallError::Unknown("syscall 999 (unknown number)".into())
    );
    assert_eq!(e.to_string(), "syscall 999 (unknown number)");
    assert!(writes(999, &z, 0, &NoMem).is_err());

    // Not a syscall number at all: the program gets the kernel's ENOSYS.
    assert_eq!(classify(u64::MAX, &z), Ok(Replay::Deny(libc::ENOSYS)));
    assert_eq!(classify(-10i64 as u64, &z), Ok(Replay::Deny(libc::ENOSYS)));
    assert_eq!(classify(9999, &z), Ok(Replay::Deny(libc::ENOSYS)));

    let e = classify(nr("modify_ldt"), &args(&[7])).unwrap_err();
    assert!(e.to_string().contains("modify_ldt function 0x7"), "{e}");
    let e = classify(nr("set_thread_area"), &z).unwrap_err();
    assert!(e.to_string().contains("set_thread_area"), "{e}");
    // io_uring is refused to the program (ENOSYS), not to the recorder.
    assert_eq!(
        classify(nr("io_uring_setup"), &z).unwrap(),
        Replay::Deny(libc::ENOSYS)
    );
    let e = classify(nr("ioctl"), &args(&[3, 0xc018_6201, 0x1000])).unwrap_err();
    assert!(e.to_string().contains("0xc0186201"), "{e}");
    assert!(e.to_string().contains("ioctl"), "{e}");
    let e = classify(nr("prctl"), &args(&[0x7777])).unwrap_err();
    assert!(e.to_string().contains("prctl option 0x7777"), "{e}");
    let e = classify(nr("fcntl"), &args(&[3, 0x4242])).unwrap_err();
    assert!(e.to_string().contains("fcntl command 0x4242"), "{e}");
    let e = classify(nr("futex"), &args(&[0x1000, 42])).unwrap_err();
    assert!(e.to_string().contains("futex operation 0x2a"), "{e}");
    let e = writes(nr("ioctl"), &args(&[3, 0xdead]), 0, &NoMem).unwrap_err();
    assert!(e.to_string().contains("0xdead"), "{e}");
    // ptrace must never run under the recorder.
    assert!(matches!(
        classify(nr("ptrace"), &z),
        Err(SyscallError::Refused(_))
    ));
}

#[test]
fn ioctls_encode_what_they_write() {
    // _IOR('X', 31, struct fsxattr): 28 bytes written at the argument, when it succeeds.
    let a = args(&[3, 0x801c_581f, 0x5000]);
    assert_eq!(classify(nr("ioctl"), &a), Ok(Replay::Emulate));
    assert_eq!(
        writes(nr("ioctl"), &a, 0, &NoMem).unwrap(),
        vec![Written {
            addr: 0x5000,
            len: 28
        }]
    );
    assert!(writes(nr("ioctl"), &a, -25, &NoMem).unwrap().is_empty());
    // _IOWR: the same; _IOW: the kernel only reads.
    let a = args(&[3, 0xc008_1234, 0x5000]);
    assert_eq!(writes(nr("ioctl"), &a, 0, &NoMem).unwrap().len(), 1);
    let a = args(&[3, 0x4008_1234, 0x5000]);
    assert!(writes(nr("ioctl"), &a, 0, &NoMem).unwrap().is_empty());
    // No direction or no size (the old requests): unknown.
    assert!(classify(nr("ioctl"), &args(&[3, 0x0000_5499])).is_err());
    assert!(classify(nr("ioctl"), &args(&[3, 0x8000_1234])).is_err());
}

#[test]
fn errors_write_nothing() {
    let m = NoMem;
    assert!(wr("read", &[0, 0x1000, 100], -11, &m).is_empty());
    assert!(wr("readv", &[0, 0x1000, 2], -14, &m).is_empty());
    assert!(wr("recvmsg", &[0, 0x1000, 0], -11, &m).is_empty());
    assert!(wr("fstat", &[0, 0x1000], -9, &m).is_empty());
    assert!(wr("getsockname", &[0, 0x1000, 0x2000], -88, &m).is_empty());
    assert!(wr("wait4", &[0, 0x1000, 0, 0x2000], -10, &m).is_empty());
    assert!(wr("poll", &[0x1000, 2, 0], -22, &m).is_empty());
    assert!(wr("epoll_wait", &[3, 0x1000, 8, 0], -4, &m).is_empty());
    assert!(wr("ioctl", &[0, 0x5401, 0x1000], -25, &m).is_empty());
    assert!(wr("clock_gettime", &[0, 0x1000], -22, &m).is_empty());
    // a successful write-nothing syscall
    assert!(wr("write", &[1, 0x1000, 100], 100, &m).is_empty());
    assert!(wr(
        "mmap",
        &[0, 4096, 3, 0x22, u64::MAX, 0],
        0x7f00_0000_0000,
        &m
    )
    .is_empty());
}

#[test]
fn read_short_and_capped() {
    let m = NoMem;
    assert_eq!(wr("read", &[0, 0x1000, 100], 42, &m), vec![w(0x1000, 42)]);
    assert_eq!(wr("read", &[0, 0x1000, 100], 0, &m), vec![]);
    // a result above count is capped by count
    assert_eq!(wr("read", &[0, 0x1000, 10], 42, &m), vec![w(0x1000, 10)]);
    assert_eq!(
        wr("pread64", &[0, 0x1000, 100, 7], 100, &m),
        vec![w(0x1000, 100)]
    );
    assert_eq!(
        wr("getrandom", &[0x1000, 16, 0], 16, &m),
        vec![w(0x1000, 16)]
    );
}

#[test]
fn readv_walks_iovecs() {
    let mut m = FakeMem::new(0x1000, 0x100);
    m.set_iovecs(0x1000, &[(0x5000, 10), (0x6000, 20), (0x7000, 30)]);
    // partial fill across the first two
    assert_eq!(
        wr("readv", &[3, 0x1000, 3], 15, &m),
        vec![w(0x5000, 10), w(0x6000, 5)]
    );
    // full
    assert_eq!(
        wr("preadv", &[3, 0x1000, 3, 0, 0], 60, &m),
        vec![w(0x5000, 10), w(0x6000, 20), w(0x7000, 30)]
    );
    // zero-length iovecs are skipped
    m.set_iovecs(0x1000, &[(0x5000, 0), (0x6000, 20)]);
    assert_eq!(wr("readv", &[3, 0x1000, 2], 4, &m), vec![w(0x6000, 4)]);
    // unreadable iovec array
    let e = writes(nr("readv"), &args(&[3, 0x9000, 2]), 4, &m).unwrap_err();
    assert!(matches!(e, SyscallError::Memory(_)));
    assert!(
        e.to_string().contains("iovec array of readv at 0x9000"),
        "{e}"
    );
}

#[test]
fn recvmsg_writes_data_name_control_and_header() {
    let hdr = 0x1000;
    let mut m = FakeMem::new(0x1000, 0x200);
    m.set_u64(hdr, 0x3000); // msg_name
    m.set_u32(hdr + 8, 16); // msg_namelen as written back
    m.set_u64(hdr + 16, 0x1100); // msg_iov
    m.set_u64(hdr + 24, 2); // msg_iovlen
    m.set_u64(hdr + 32, 0x4000); // msg_control
    m.set_u64(hdr + 40, 24); // msg_controllen as written back
    m.set_iovecs(0x1100, &[(0x5000, 8), (0x6000, 100)]);
    assert_eq!(
        wr("recvmsg", &[3, hdr, 0], 20, &m),
        vec![
            w(hdr + 8, 4),
            w(0x3000, 16),
            w(0x5000, 8),
            w(0x6000, 12),
            w(hdr + 40, 8),
            w(0x4000, 24),
            w(hdr + 48, 4),
        ]
    );
    // no name, no control
    m.set_u64(hdr, 0);
    m.set_u64(hdr + 32, 0);
    m.set_u64(hdr + 40, 0);
    assert_eq!(
        wr("recvmsg", &[3, hdr, 0], 3, &m),
        vec![w(0x5000, 3), w(hdr + 40, 8), w(hdr + 48, 4)]
    );
}

#[test]
fn recvmmsg_and_sendmmsg() {
    let v = 0x1000;
    let mut m = FakeMem::new(0x1000, 0x400);
    for i in 0..2u64 {
        let e = v + 64 * i;
        m.set_u64(e + 16, 0x1200 + 16 * i); // msg_iov
        m.set_u64(e + 24, 1);
        m.set_u32(e + 56, 5 + i as u32); // msg_len
    }
    m.set_iovecs(0x1200, &[(0x5000, 100), (0x6000, 100)]);
    assert_eq!(
        wr("recvmmsg", &[3, v, 8, 0, 0], 2, &m),
        vec![
            w(v + 56, 4),
            w(0x5000, 5),
            w(v + 40, 8),
            w(v + 48, 4),
            w(v + 64 + 56, 4),
            w(0x6000, 6),
            w(v + 64 + 40, 8),
            w(v + 64 + 48, 4),
        ]
    );
    assert_eq!(
        wr("sendmmsg", &[3, v, 8, 0], 2, &NoMem),
        vec![w(v + 56, 4), w(v + 64 + 56, 4)]
    );
}

#[test]
fn wait4_with_and_without_status() {
    let m = NoMem;
    assert_eq!(
        wr("wait4", &[u64::MAX, 0x1000, 0, 0], 1234, &m),
        vec![w(0x1000, 4)]
    );
    assert_eq!(wr("wait4", &[u64::MAX, 0, 0, 0], 1234, &m), vec![]);
    assert_eq!(
        wr("wait4", &[u64::MAX, 0x1000, 0, 0x2000], 1234, &m),
        vec![w(0x1000, 4), w(0x2000, 144)]
    );
    // WNOHANG with no child ready: nothing written
    assert_eq!(wr("wait4", &[u64::MAX, 0x1000, 1, 0x2000], 0, &m), vec![]);
}

#[test]
fn ioctls() {
    let m = NoMem;
    assert_eq!(
        wr("ioctl", &[0, 0x5401, 0x1000], 0, &m),
        vec![w(0x1000, 36)]
    );
    assert_eq!(wr("ioctl", &[0, 0x5413, 0x1000], 0, &m), vec![w(0x1000, 8)]);
    assert_eq!(wr("ioctl", &[0, 0x541B, 0x1000], 0, &m), vec![w(0x1000, 4)]);
    assert_eq!(
        wr("ioctl", &[0, 0x8004_5430, 0x1000], 0, &m),
        vec![w(0x1000, 4)]
    );
    assert_eq!(wr("ioctl", &[0, 0x5402, 0x1000], 0, &m), vec![]);
    assert_eq!(wr("ioctl", &[0, 0x5421, 0x1000], 0, &m), vec![]);
    // the request is a 32-bit value: upper bits are ignored as the kernel does
    assert_eq!(
        wr("ioctl", &[0, 0xffff_ffff_0000_5401, 0x1000], 0, &m),
        vec![w(0x1000, 36)]
    );
    let e = classify(nr("ioctl"), &args(&[0, 0x1234, 0])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ioctl request 0x1234 on syscall ioctl (unknown)"
    );
}

#[test]
fn fcntl_and_prctl() {
    let m = NoMem;
    assert_eq!(wr("fcntl", &[3, 5, 0x1000], 0, &m), vec![w(0x1000, 32)]);
    assert_eq!(wr("fcntl", &[3, 36, 0x1000], 0, &m), vec![w(0x1000, 32)]);
    assert_eq!(wr("fcntl", &[3, 4, 0x800], 0, &m), vec![]);
    assert_eq!(wr("fcntl", &[3, 1030, 0], 5, &m), vec![]);
    assert_eq!(wr("prctl", &[16, 0x1000], 0, &m), vec![w(0x1000, 16)]);
    assert_eq!(wr("prctl", &[2, 0x1000], 0, &m), vec![w(0x1000, 4)]);
    assert_eq!(wr("prctl", &[15, 0x1000], 0, &m), vec![]);
    assert_eq!(
        wr("arch_prctl", &[0x1003, 0x1000], 0, &m),
        vec![w(0x1000, 8)]
    );
}

#[test]
fn socket_addresses() {
    let mut m = FakeMem::new(0x1000, 0x100);
    // getsockname: the kernel wrote back a 16-byte address length
    m.set_u32(0x1080, 16);
    assert_eq!(
        wr("getsockname", &[3, 0x1000, 0x1080], 0, &m),
        vec![w(0x1080, 4), w(0x1000, 16)]
    );
    // accept with null addr: nothing (the kernel does not touch addrlen)
    assert_eq!(wr("accept", &[3, 0, 0x1080], 5, &m), vec![]);
    // getsockname with null addr: the length alone
    assert_eq!(
        wr("getsockname", &[3, 0, 0x1080], 0, &m),
        vec![w(0x1080, 4)]
    );
    // accept4 with a connected peer address length 0
    m.set_u32(0x1080, 0);
    assert_eq!(
        wr("accept4", &[3, 0x1000, 0x1080, 0], 5, &m),
        vec![w(0x1080, 4)]
    );
    // an absurd written-back length is capped by sockaddr_storage
    m.set_u32(0x1080, 4000);
    assert_eq!(
        wr("getpeername", &[3, 0x1000, 0x1080], 0, &m),
        vec![w(0x1080, 4), w(0x1000, 128)]
    );
    // recvfrom: data, then address
    m.set_u32(0x1080, 16);
    assert_eq!(
        wr("recvfrom", &[3, 0x5000, 64, 0, 0x1000, 0x1080], 10, &m),
        vec![w(0x5000, 10), w(0x1080, 4), w(0x1000, 16)]
    );
    assert_eq!(
        wr("recvfrom", &[3, 0x5000, 64, 0, 0, 0], 10, &NoMem),
        vec![w(0x5000, 10)]
    );
    // getsockopt: optval up to the written-back optlen
    m.set_u32(0x1080, 4);
    assert_eq!(
        wr("getsockopt", &[3, 1, 7, 0x1000, 0x1080], 0, &m),
        vec![w(0x1080, 4), w(0x1000, 4)]
    );
}

#[test]
fn poll_select_epoll() {
    let m = NoMem;
    assert_eq!(wr("poll", &[0x1000, 3, 100], 1, &m), vec![w(0x1000, 24)]);
    assert_eq!(wr("poll", &[0x1000, 3, 100], 0, &m), vec![w(0x1000, 24)]);
    // revents are stored even when interrupted
    assert_eq!(wr("poll", &[0x1000, 3, 100], -4, &m), vec![w(0x1000, 24)]);
    assert_eq!(
        wr("ppoll", &[0x1000, 2, 0x2000, 0, 8], 1, &m),
        vec![w(0x1000, 16), w(0x2000, 16)]
    );
    assert_eq!(
        wr("epoll_wait", &[3, 0x1000, 8, 0], 2, &m),
        vec![w(0x1000, 24)]
    );
    assert_eq!(wr("epoll_pwait", &[3, 0x1000, 8, 0, 0, 8], 0, &m), vec![]);
    assert_eq!(
        wr("select", &[65, 0x1000, 0, 0x3000, 0x4000], 1, &m),
        vec![w(0x1000, 16), w(0x3000, 16), w(0x4000, 16)]
    );
    assert_eq!(
        wr("pselect6", &[3, 0x1000, 0x2000, 0, 0, 0], 1, &m),
        vec![w(0x1000, 8), w(0x2000, 8)]
    );
    // select interrupted: only the remaining timeout
    assert_eq!(
        wr("select", &[3, 0x1000, 0, 0, 0x4000], -514, &m),
        vec![w(0x4000, 16)]
    );
}

#[test]
fn sleeps_write_remaining_time_only_when_interrupted() {
    let m = NoMem;
    assert_eq!(wr("nanosleep", &[0x1000, 0x2000], 0, &m), vec![]);
    assert_eq!(
        wr("nanosleep", &[0x1000, 0x2000], -4, &m),
        vec![w(0x2000, 16)]
    );
    assert_eq!(
        wr("nanosleep", &[0x1000, 0x2000], -516, &m),
        vec![w(0x2000, 16)]
    );
    assert_eq!(wr("nanosleep", &[0x1000, 0], -4, &m), vec![]);
    assert_eq!(
        wr("clock_nanosleep", &[1, 0, 0x1000, 0x2000], -4, &m),
        vec![w(0x2000, 16)]
    );
    // TIMER_ABSTIME
    assert_eq!(
        wr("clock_nanosleep", &[1, 1, 0x1000, 0x2000], -4, &m),
        vec![]
    );
}

#[test]
fn fixed_size_results() {
    let m = NoMem;
    assert_eq!(wr("fstat", &[3, 0x1000], 0, &m), vec![w(0x1000, 144)]);
    assert_eq!(
        wr("newfstatat", &[3, 0x2000, 0x1000, 0], 0, &m),
        vec![w(0x1000, 144)]
    );
    assert_eq!(
        wr("statx", &[3, 0x2000, 0, 0x7ff, 0x1000], 0, &m),
        vec![w(0x1000, 256)]
    );
    assert_eq!(wr("pipe2", &[0x1000, 0], 0, &m), vec![w(0x1000, 8)]);
    assert_eq!(
        wr("clock_gettime", &[1, 0x1000], 0, &m),
        vec![w(0x1000, 16)]
    );
    assert_eq!(
        wr("gettimeofday", &[0x1000, 0x2000], 0, &m),
        vec![w(0x1000, 16), w(0x2000, 8)]
    );
    assert_eq!(wr("gettimeofday", &[0x1000, 0], 0, &m), vec![w(0x1000, 16)]);
    assert_eq!(wr("time", &[0], 1_700_000_000, &m), vec![]);
    assert_eq!(wr("time", &[0x1000], 1_700_000_000, &m), vec![w(0x1000, 8)]);
    assert_eq!(
        wr("prlimit64", &[0, 7, 0, 0x1000], 0, &m),
        vec![w(0x1000, 16)]
    );
    assert_eq!(
        wr("rt_sigaction", &[2, 0x2000, 0x1000, 8], 0, &m),
        vec![w(0x1000, 32)]
    );
    assert_eq!(
        wr("rt_sigprocmask", &[0, 0x2000, 0x1000, 8], 0, &m),
        vec![w(0x1000, 8)]
    );
    assert_eq!(wr("rt_sigprocmask", &[0, 0x2000, 0, 8], 0, &m), vec![]);
    assert_eq!(
        wr("getresuid", &[0x1000, 0x1004, 0x1008], 0, &m),
        vec![w(0x1000, 4), w(0x1004, 4), w(0x1008, 4)]
    );
    assert_eq!(wr("getgroups", &[32, 0x1000], 3, &m), vec![w(0x1000, 12)]);
    assert_eq!(wr("getgroups", &[0, 0], 3, &m), vec![]);
    assert_eq!(
        wr("sendfile", &[1, 3, 0x1000, 100], 100, &m),
        vec![w(0x1000, 8)]
    );
    assert_eq!(wr("sendfile", &[1, 3, 0, 100], 100, &m), vec![]);
}

#[test]
fn futex_ops() {
    let m = NoMem;
    // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
    assert_eq!(wr("futex", &[0x1000, 128, 0, 0, 0, 0], 0, &m), vec![]);
    // FUTEX_WAKE_OP writes uaddr2
    assert_eq!(
        wr("futex", &[0x1000, 5 | 128, 1, 1, 0x2000, 0], 1, &m),
        vec![w(0x2000, 4)]
    );
    // FUTEX_LOCK_PI writes the futex word, even on timeout
    assert_eq!(
        wr("futex", &[0x1000, 6, 0, 0x3000, 0, 0], -110, &m),
        vec![w(0x1000, 4)]
    );
}

#[test]
fn clone_tid_words() {
    let m = NoMem;
    let flags = 0x0010_0000 | 0x0100_0000; // PARENT_SETTID | CHILD_SETTID
    assert_eq!(
        wr("clone", &[flags, 0, 0x1000, 0x2000, 0], 1234, &m),
        vec![w(0x1000, 4)]
    );
    assert_eq!(
        wr("clone", &[flags, 0, 0x1000, 0x2000, 0], 0, &m),
        vec![w(0x2000, 4)]
    );
    let mut m = FakeMem::new(0x1000, 0x100);
    m.set_u64(0x1000, 0x1000 | 0x0010_0000); // CLONE_PIDFD | CLONE_PARENT_SETTID
    m.set_u64(0x1008, 0x3000); // pidfd
    m.set_u64(0x1018, 0x4000); // parent_tid
    assert_eq!(
        wr("clone3", &[0x1000, 88], 77, &m),
        vec![w(0x4000, 4), w(0x3000, 4)]
    );
}

#[test]
fn result_helpers() {
    assert!(is_error(-1));
    assert!(is_error(-4095));
    assert!(!is_error(-4096));
    assert!(!is_error(0));
    assert!(!is_error(0x7f00_0000_0000));
    assert!(is_interrupted(-4));
    assert!(is_interrupted(-512));
    assert!(!is_interrupted(-11));
}

#[test]
fn every_named_syscall_is_modeled_or_refused_by_name() {
    for n in 0..=470u64 {
        let Some(s) = name(n) else { continue };
        match classify(n, &[0; 6]) {
            Ok(_) => {}
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains("not modeled"), "{s}: {msg}");
                assert!(msg.contains(s), "{s}: {msg}");
            }
        }
    }
    assert_eq!(name(470), Some("listns"));
    assert_eq!(name(471), None);
}

#[test]
fn removed_syscalls_accept_only_enosys() {
    let n = nr("_sysctl");
    assert_eq!(classify(n, &[0; 6]), Ok(Replay::Emulate));
    assert_eq!(writes(n, &[0; 6], -38, &NoMem), Ok(vec![]));
    assert!(writes(n, &[0; 6], 0, &NoMem).is_err());
}

#[test]
fn entry_state_caps_socket_addresses() {
    use hindsight_syscalls::{entry_state, writes_with_entry};
    let mut m = FakeMem::new(0x1000, 0x200);
    // accept: the caller passed a 16-byte buffer; the kernel stores 110
    m.set_u32(0x1080, 16);
    let a = args(&[3, 0x1000, 0x1080]);
    let e = entry_state(nr("accept"), &a, &m);
    assert_eq!(e.len_at(0x1080), Some(16));
    m.set_u32(0x1080, 110);
    assert_eq!(
        writes_with_entry(nr("accept"), &a, 4, &m, &e).unwrap(),
        vec![w(0x1080, 4), w(0x1000, 16)]
    );
    assert_eq!(
        writes(nr("accept"), &a, 4, &m).unwrap(),
        vec![w(0x1080, 4), w(0x1000, 110)]
    );
    // recvmsg: msg_namelen in the msghdr
    let hdr = 0x1100;
    m.set_u64(hdr, 0x1000);
    m.set_u32(hdr + 8, 8);
    let a = args(&[3, hdr, 0]);
    let e = entry_state(nr("recvmsg"), &a, &m);
    m.set_u32(hdr + 8, 16);
    assert_eq!(
        writes_with_entry(nr("recvmsg"), &a, 0, &m, &e).unwrap(),
        vec![w(hdr + 8, 4), w(0x1000, 8), w(hdr + 40, 8), w(hdr + 48, 4)]
    );
    // nothing to capture for other syscalls, nor for null pointers
    assert!(entry_state(nr("read"), &args(&[0, 0x1000, 4]), &m).is_empty());
    assert!(entry_state(nr("accept"), &args(&[3, 0, 0x1080]), &m).is_empty());
    // unreadable words are skipped
    assert!(entry_state(nr("getsockname"), &args(&[3, 0x1000, 0x9000]), &m).is_empty());
}

/// The fixed sizes used for each syscall agree with the C library's types.
#[test]
fn sizes_agree_with_libc_types() {
    use std::mem::size_of;
    let one = |n: &str, a: &[u64], result: i64| -> usize {
        let r = wr(n, a, result, &NoMem);
        assert_eq!(r.len(), 1, "{n}: {r:?}");
        r[0].len
    };
    let p = 0x1000;
    assert_eq!(one("fstat", &[3, p], 0), size_of::<libc::stat>());
    assert_eq!(one("statx", &[3, p, 0, 0, p], 0), size_of::<libc::statx>());
    assert_eq!(one("fstatfs", &[3, p], 0), size_of::<libc::statfs>());
    assert_eq!(one("sysinfo", &[p], 0), size_of::<libc::sysinfo>());
    assert_eq!(one("getrusage", &[0, p], 0), size_of::<libc::rusage>());
    assert_eq!(one("adjtimex", &[p], 0), size_of::<libc::timex>());
    assert_eq!(one("uname", &[p], 0), size_of::<libc::utsname>());
    assert_eq!(one("times", &[p], 0), size_of::<libc::tms>());
    assert_eq!(one("getrlimit", &[0, p], 0), size_of::<libc::rlimit>());
    assert_eq!(
        one("clock_gettime", &[0, p], 0),
        size_of::<libc::timespec>()
    );
    assert_eq!(one("getitimer", &[0, p], 0), size_of::<libc::itimerval>());
    assert_eq!(
        one("timer_gettime", &[0, p], 0),
        size_of::<libc::itimerspec>()
    );
    assert_eq!(one("sigaltstack", &[0, p], 0), size_of::<libc::stack_t>());
    assert_eq!(
        one("waitid", &[0, 0, p, 4, 0], 0),
        size_of::<libc::siginfo_t>()
    );
    assert_eq!(one("fcntl", &[3, 5, p], 0), size_of::<libc::flock>());
    assert_eq!(
        one("mq_getsetattr", &[3, 0, p], 0),
        size_of::<libc::mq_attr>()
    );
    assert_eq!(one("msgctl", &[3, 2, p], 0), size_of::<libc::msqid_ds>());
    assert_eq!(one("shmctl", &[3, 2, p], 0), size_of::<libc::shmid_ds>());
    assert_eq!(one("ioctl", &[0, 0x5413, p], 0), size_of::<libc::winsize>());
    assert_eq!(
        one("ioctl", &[0, 0x802C_542A, p], 0),
        size_of::<libc::termios2>()
    );
    assert_eq!(
        one("epoll_wait", &[3, p, 4, 0], 1),
        size_of::<libc::epoll_event>()
    );
    assert_eq!(one("poll", &[p, 1, 0], 1), size_of::<libc::pollfd>());
    assert_eq!(one("sendmmsg", &[3, p, 2, 0], 1), 4);
    assert_eq!(size_of::<libc::mmsghdr>(), 64);
    assert_eq!(size_of::<libc::msghdr>(), 56);
    assert_eq!(one("cachestat", &[3, 0, p, 0], 0), 40);
}
