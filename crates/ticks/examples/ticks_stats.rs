//! Prints how the counter would patch ELF files: `cargo run --example ticks_stats -- FILE...`.
use hindsight_ticks::assemble::{assemble, MAX_TRAMPOLINE};
use hindsight_ticks::code::ModuleCode;
use hindsight_ticks::plan::{plan, How};
use hindsight_ticks::scan::Scan;
use std::collections::BTreeMap;

fn main() {
    if let Ok(v) = std::env::var("SYSCALL") {
        let (p, a) = v.split_once(':').unwrap();
        debug_syscall(p, u64::from_str_radix(a, 16).unwrap());
        return;
    }
    if let Ok(v) = std::env::var("SITE") {
        let (p, i) = v.split_once(':').unwrap();
        dump_site(p, i.parse().unwrap());
        return;
    }
    for path in std::env::args().skip(1) {
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("{path}: cannot read");
            continue;
        };
        let t = std::time::Instant::now();
        let Ok(code) = ModuleCode::from_elf(&bytes) else {
            eprintln!("{path}: not ELF");
            continue;
        };
        let scan = Scan::new(&code);
        let p = plan(&scan);
        let t_plan = t.elapsed();
        let base = 0x7000_0000_0000u64
            - MAX_TRAMPOLINE * (p.sites.len() + p.syscalls.len()) as u64
            - 0x10000;
        let patched = assemble(
            &code,
            &scan,
            &p,
            0x7000_0000_0000,
            base & !0xfff,
            Some(0x7a00_0000_0000),
        );
        let mut how: BTreeMap<String, usize> = BTreeMap::new();
        for s in &p.sites {
            let h = match s.how {
                How::InPlace => "in place",
                How::Island { .. } => "island",
                How::Region { .. } => "region",
            };
            *how.entry(format!(
                "{:?} {h}{}",
                s.kind,
                if s.flags_live { " (flags live)" } else { "" }
            ))
            .or_default() += 1;
        }
        let mut why: BTreeMap<String, usize> = BTreeMap::new();
        for u in &patched.uncounted {
            *why.entry(format!("{:?}: {}", u.kind, u.why)).or_default() += 1;
        }
        println!(
            "{path}: {} instructions, {} functions; {} sites, {} uncounted; trampolines {} KiB; plan {:?}, total {:?}",
            scan.insns.len(),
            code.functions.len(),
            p.sites.len(),
            patched.uncounted.len(),
            patched.code.len() / 1024,
            t_plan,
            t.elapsed()
        );
        for (k, n) in how {
            println!("  {n:7} {k}");
        }
        let islands = p
            .syscalls
            .iter()
            .filter(|s| matches!(s.how, How::Island { .. }))
            .count();
        println!(
            "  syscalls: {} to the agent ({} by island, {} by region; {} stubs made), {} left traced",
            p.syscalls.len(),
            islands,
            p.syscalls.len() - islands,
            patched.agent_stubs.len(),
            p.unpatched_syscalls.len()
        );
        let mut sys_why: BTreeMap<&str, usize> = BTreeMap::new();
        for (at, why) in &p.unpatched_syscalls {
            *sys_why.entry(why).or_default() += 1;
            if std::env::var_os("SYSCALLS").is_some() {
                println!("    traced syscall at {at:#x}: {why}");
            }
        }
        for (k, n) in sys_why {
            println!("  {n:7} syscalls left traced: {k}");
        }
        for (k, n) in why {
            println!("  {n:7} UNCOUNTED {k}");
        }
    }
}

#[allow(dead_code)]
fn dump_site(path: &str, idx: usize) {
    let bytes = std::fs::read(path).unwrap();
    let code = ModuleCode::from_elf(&bytes).unwrap();
    let scan = Scan::new(&code);
    let p = plan(&scan);
    if let Some(s) = p.sites.get(idx) {
        println!("{path} site {idx}: {s:x?}");
        let one = hindsight_ticks::plan::Plan {
            sites: vec![*s],
            ..Default::default()
        };
        let patched = assemble(&code, &scan, &one, 0, 0x100000, None);
        println!("writes: {:x?}", patched.writes);
        println!(
            "traps: {:x?}\nboundaries: {:x?}",
            patched.traps, patched.boundaries
        );
        let mut dec = iced_x86::Decoder::with_ip(64, &patched.code, 0x100000, 0);
        let mut f = iced_x86::GasFormatter::new();
        use iced_x86::Formatter;
        while dec.can_decode() {
            let i = dec.decode();
            let mut o = String::new();
            f.format(&i, &mut o);
            println!("  {:x}: {o}", i.ip());
        }
    }
}

#[allow(dead_code)]
pub fn debug_syscall(path: &str, at: u64) {
    let bytes = std::fs::read(path).unwrap();
    let code = ModuleCode::from_elf(&bytes).unwrap();
    let scan = Scan::new(&code);
    let k = scan.index_of(at).unwrap();
    for j in k.saturating_sub(3)..k + 4 {
        let i = &scan.insns[j];
        println!(
            "{:#x} {} counted {:?} target {} unknown {} infn {}",
            i.ip(),
            i.insn,
            i.counted,
            scan.is_target(i.ip()),
            i.unknown_targets,
            i.in_function
        );
    }
}
