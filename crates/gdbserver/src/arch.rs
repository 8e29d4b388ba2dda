//! x86-64 for gdb, as hindsight describes it: the general registers, the x87 and SSE state,
//! `orig_rax` (gdb's `org.gnu.gdb.i386.linux` feature) and `fs_base`/`gs_base`
//! (`org.gnu.gdb.i386.segments`), so that thread-local variables such as `errno` resolve.
//!
//! The register numbers are gdb's amd64-linux ones; `g` packets carry the registers in that
//! order, little-endian.

use gdbstub::arch::{Arch, Registers};

/// The architecture, for gdbstub.
pub enum X86_64Linux {}

impl Arch for X86_64Linux {
    type Usize = u64;
    type Registers = Regs;
    type BreakpointKind = usize;
    type RegId = RegNum;

    fn target_description_xml() -> Option<&'static str> {
        Some(TARGET_XML)
    }
}

/// A register by gdb's number for it in the target description (`p`/`P` packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegNum(pub usize);

/// orig_rax (writing it is accepted and ignored: the replay decides
/// what syscalls do).
pub const ORIG_RAX: RegNum = RegNum(57);

impl RegNum {
    /// Where the register is in a `g` packet: (offset, size in bytes).
    pub fn span(self) -> Option<(usize, usize)> {
        // (first number, count, size) of each run of same-sized registers, in order.
        const RUNS: [(usize, usize, usize); 7] = [
            (0, 17, 8),   // rax…r15, rip
            (17, 7, 4),   // eflags, cs…gs
            (24, 8, 10),  // st0–st7
            (32, 8, 4),   // fctrl…fop
            (40, 16, 16), // xmm0–xmm15
            (56, 1, 4),   // mxcsr
            (57, 3, 8),   // orig_rax, fs_base, gs_base
        ];
        let mut offset = 0;
        for (first, count, size) in RUNS {
            if (first..first + count).contains(&self.0) {
                return Some((offset + (self.0 - first) * size, size));
            }
            offset += count * size;
        }
        None
    }
}

impl gdbstub::arch::RegId for RegNum {
    fn from_raw_id(id: usize) -> Option<(Self, Option<std::num::NonZeroUsize>)> {
        let (_, size) = RegNum(id).span()?;
        Some((RegNum(id), std::num::NonZeroUsize::new(size)))
    }

    fn to_raw_id(&self) -> Option<usize> {
        Some(self.0)
    }
}

/// Every register gdb reads, in the target description's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Regs {
    /// rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8–r15 (gdb's order).
    pub gpr: [u64; 16],
    /// The program counter.
    pub rip: u64,
    /// Flags.
    pub eflags: u32,
    /// cs, ss, ds, es, fs, gs.
    pub segments: [u32; 6],
    /// st0–st7, 10 bytes each.
    pub st: [[u8; 10]; 8],
    /// fctrl, fstat, ftag, fiseg, fioff, foseg, fooff, fop.
    pub x87_control: [u32; 8],
    /// xmm0–xmm15.
    pub xmm: [[u8; 16]; 16],
    /// SSE control and status.
    pub mxcsr: u32,
    /// The syscall a thread stopped in (-1 for none).
    pub orig_rax: u64,
    /// Thread-local storage base.
    pub fs_base: u64,
    /// The other segment base.
    pub gs_base: u64,
}

impl Registers for Regs {
    type ProgramCounter = u64;

    fn pc(&self) -> u64 {
        self.rip
    }

    fn gdb_serialize(&self, mut write_byte: impl FnMut(Option<u8>)) {
        let mut put = |bytes: &[u8]| bytes.iter().for_each(|b| write_byte(Some(*b)));
        for r in &self.gpr {
            put(&r.to_le_bytes());
        }
        put(&self.rip.to_le_bytes());
        put(&self.eflags.to_le_bytes());
        for s in &self.segments {
            put(&s.to_le_bytes());
        }
        for st in &self.st {
            put(st);
        }
        for c in &self.x87_control {
            put(&c.to_le_bytes());
        }
        for x in &self.xmm {
            put(x);
        }
        put(&self.mxcsr.to_le_bytes());
        put(&self.orig_rax.to_le_bytes());
        put(&self.fs_base.to_le_bytes());
        put(&self.gs_base.to_le_bytes());
    }

    fn gdb_deserialize(&mut self, bytes: &[u8]) -> Result<(), ()> {
        // Writes are refused by the target (the recorded past cannot change); parsing the
        // general registers is enough to report that cleanly.
        let mut words = bytes.chunks_exact(8);
        for r in self.gpr.iter_mut() {
            let w = words.next().ok_or(())?;
            *r = u64::from_le_bytes(w.try_into().map_err(|_| ())?);
        }
        let w = words.next().ok_or(())?;
        self.rip = u64::from_le_bytes(w.try_into().map_err(|_| ())?);
        Ok(())
    }
}

impl Regs {
    /// The bytes of one register, as a `g` packet carries them.
    pub fn register_bytes(&self, reg: RegNum) -> Option<Vec<u8>> {
        let (offset, size) = reg.span()?;
        let mut all = Vec::with_capacity(600);
        self.gdb_serialize(|b| all.push(b.unwrap_or(0)));
        all.get(offset..offset + size).map(<[u8]>::to_vec)
    }

    /// From ptrace's register sets.
    pub fn from_ptrace(r: &hindsight_ptrace::Regs, fp: Option<&hindsight_ptrace::FpRegs>) -> Regs {
        let g = &r.0;
        let mut out = Regs {
            gpr: [
                g.rax, g.rbx, g.rcx, g.rdx, g.rsi, g.rdi, g.rbp, g.rsp, g.r8, g.r9, g.r10, g.r11,
                g.r12, g.r13, g.r14, g.r15,
            ],
            rip: g.rip,
            eflags: g.eflags as u32,
            segments: [
                g.cs as u32,
                g.ss as u32,
                g.ds as u32,
                g.es as u32,
                g.fs as u32,
                g.gs as u32,
            ],
            orig_rax: g.orig_rax,
            fs_base: g.fs_base,
            gs_base: g.gs_base,
            ..Regs::default()
        };
        if let Some(fp) = fp {
            let f = &fp.0;
            // FXSAVE layout: st registers are 16-byte slots (10 bytes used), xmm 16 bytes.
            for (i, st) in out.st.iter_mut().enumerate() {
                let words = &f.st_space[i * 4..i * 4 + 4];
                let mut bytes = [0u8; 16];
                for (j, w) in words.iter().enumerate() {
                    bytes[j * 4..j * 4 + 4].copy_from_slice(&w.to_le_bytes());
                }
                st.copy_from_slice(&bytes[..10]);
            }
            for (i, x) in out.xmm.iter_mut().enumerate() {
                let words = &f.xmm_space[i * 4..i * 4 + 4];
                for (j, w) in words.iter().enumerate() {
                    x[j * 4..j * 4 + 4].copy_from_slice(&w.to_le_bytes());
                }
            }
            // gdb's ftag is the full 16-bit tag word; FXSAVE keeps an abridged byte, which
            // gdb accepts as is for display.
            out.x87_control = [
                u32::from(f.cwd),
                u32::from(f.swd),
                u32::from(f.ftw),
                (f.rip >> 32) as u32 & 0xffff,
                f.rip as u32,
                (f.rdp >> 32) as u32 & 0xffff,
                f.rdp as u32,
                u32::from(f.fop),
            ];
            out.mxcsr = f.mxcsr;
        }
        out
    }
}

/// gdb's amd64-linux registers: core, SSE, linux (orig_rax) and segments (fs_base, gs_base).
const TARGET_XML: &str = r#"<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
  <architecture>i386:x86-64</architecture>
  <osabi>GNU/Linux</osabi>
  <feature name="org.gnu.gdb.i386.core">
    <flags id="i386_eflags" size="4">
      <field name="CF" start="0" end="0"/>
      <field name="" start="1" end="1"/>
      <field name="PF" start="2" end="2"/>
      <field name="AF" start="4" end="4"/>
      <field name="ZF" start="6" end="6"/>
      <field name="SF" start="7" end="7"/>
      <field name="TF" start="8" end="8"/>
      <field name="IF" start="9" end="9"/>
      <field name="DF" start="10" end="10"/>
      <field name="OF" start="11" end="11"/>
      <field name="NT" start="14" end="14"/>
      <field name="RF" start="16" end="16"/>
      <field name="VM" start="17" end="17"/>
      <field name="AC" start="18" end="18"/>
      <field name="VIF" start="19" end="19"/>
      <field name="VIP" start="20" end="20"/>
      <field name="ID" start="21" end="21"/>
    </flags>
    <reg name="rax" bitsize="64" type="int64" regnum="0"/>
    <reg name="rbx" bitsize="64" type="int64"/>
    <reg name="rcx" bitsize="64" type="int64"/>
    <reg name="rdx" bitsize="64" type="int64"/>
    <reg name="rsi" bitsize="64" type="int64"/>
    <reg name="rdi" bitsize="64" type="int64"/>
    <reg name="rbp" bitsize="64" type="data_ptr"/>
    <reg name="rsp" bitsize="64" type="data_ptr"/>
    <reg name="r8" bitsize="64" type="int64"/>
    <reg name="r9" bitsize="64" type="int64"/>
    <reg name="r10" bitsize="64" type="int64"/>
    <reg name="r11" bitsize="64" type="int64"/>
    <reg name="r12" bitsize="64" type="int64"/>
    <reg name="r13" bitsize="64" type="int64"/>
    <reg name="r14" bitsize="64" type="int64"/>
    <reg name="r15" bitsize="64" type="int64"/>
    <reg name="rip" bitsize="64" type="code_ptr"/>
    <reg name="eflags" bitsize="32" type="i386_eflags"/>
    <reg name="cs" bitsize="32" type="int32"/>
    <reg name="ss" bitsize="32" type="int32"/>
    <reg name="ds" bitsize="32" type="int32"/>
    <reg name="es" bitsize="32" type="int32"/>
    <reg name="fs" bitsize="32" type="int32"/>
    <reg name="gs" bitsize="32" type="int32"/>
    <reg name="st0" bitsize="80" type="i387_ext"/>
    <reg name="st1" bitsize="80" type="i387_ext"/>
    <reg name="st2" bitsize="80" type="i387_ext"/>
    <reg name="st3" bitsize="80" type="i387_ext"/>
    <reg name="st4" bitsize="80" type="i387_ext"/>
    <reg name="st5" bitsize="80" type="i387_ext"/>
    <reg name="st6" bitsize="80" type="i387_ext"/>
    <reg name="st7" bitsize="80" type="i387_ext"/>
    <reg name="fctrl" bitsize="32" type="int" group="float"/>
    <reg name="fstat" bitsize="32" type="int" group="float"/>
    <reg name="ftag" bitsize="32" type="int" group="float"/>
    <reg name="fiseg" bitsize="32" type="int" group="float"/>
    <reg name="fioff" bitsize="32" type="int" group="float"/>
    <reg name="foseg" bitsize="32" type="int" group="float"/>
    <reg name="fooff" bitsize="32" type="int" group="float"/>
    <reg name="fop" bitsize="32" type="int" group="float"/>
  </feature>
  <feature name="org.gnu.gdb.i386.sse">
    <vector id="v8bf16" type="bfloat16" count="8"/>
    <vector id="v4f" type="ieee_single" count="4"/>
    <vector id="v2d" type="ieee_double" count="2"/>
    <vector id="v16i8" type="int8" count="16"/>
    <vector id="v8i16" type="int16" count="8"/>
    <vector id="v4i32" type="int32" count="4"/>
    <vector id="v2i64" type="int64" count="2"/>
    <union id="vec128">
      <field name="v8_bfloat16" type="v8bf16"/>
      <field name="v4_float" type="v4f"/>
      <field name="v2_double" type="v2d"/>
      <field name="v16_int8" type="v16i8"/>
      <field name="v8_int16" type="v8i16"/>
      <field name="v4_int32" type="v4i32"/>
      <field name="v2_int64" type="v2i64"/>
      <field name="uint128" type="uint128"/>
    </union>
    <flags id="i386_mxcsr" size="4">
      <field name="IE" start="0" end="0"/>
      <field name="DE" start="1" end="1"/>
      <field name="ZE" start="2" end="2"/>
      <field name="OE" start="3" end="3"/>
      <field name="UE" start="4" end="4"/>
      <field name="PE" start="5" end="5"/>
      <field name="DAZ" start="6" end="6"/>
      <field name="IM" start="7" end="7"/>
      <field name="DM" start="8" end="8"/>
      <field name="ZM" start="9" end="9"/>
      <field name="OM" start="10" end="10"/>
      <field name="UM" start="11" end="11"/>
      <field name="PM" start="12" end="12"/>
      <field name="FZ" start="15" end="15"/>
    </flags>
    <reg name="xmm0" bitsize="128" type="vec128" regnum="40"/>
    <reg name="xmm1" bitsize="128" type="vec128"/>
    <reg name="xmm2" bitsize="128" type="vec128"/>
    <reg name="xmm3" bitsize="128" type="vec128"/>
    <reg name="xmm4" bitsize="128" type="vec128"/>
    <reg name="xmm5" bitsize="128" type="vec128"/>
    <reg name="xmm6" bitsize="128" type="vec128"/>
    <reg name="xmm7" bitsize="128" type="vec128"/>
    <reg name="xmm8" bitsize="128" type="vec128"/>
    <reg name="xmm9" bitsize="128" type="vec128"/>
    <reg name="xmm10" bitsize="128" type="vec128"/>
    <reg name="xmm11" bitsize="128" type="vec128"/>
    <reg name="xmm12" bitsize="128" type="vec128"/>
    <reg name="xmm13" bitsize="128" type="vec128"/>
    <reg name="xmm14" bitsize="128" type="vec128"/>
    <reg name="xmm15" bitsize="128" type="vec128"/>
    <reg name="mxcsr" bitsize="32" type="i386_mxcsr" group="vector"/>
  </feature>
  <feature name="org.gnu.gdb.i386.linux">
    <reg name="orig_rax" bitsize="64" type="int" regnum="57"/>
  </feature>
  <feature name="org.gnu.gdb.i386.segments">
    <reg name="fs_base" bitsize="64" type="int"/>
    <reg name="gs_base" bitsize="64" type="int"/>
  </feature>
</target>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_g_packet_has_every_register_of_the_description() {
        let mut n = 0;
        Regs::default().gdb_serialize(|_| n += 1);
        // 16×8 + 8 + 4 + 6×4 + 8×10 + 8×4 + 16×16 + 4 + 3×8
        assert_eq!(n, 128 + 8 + 4 + 24 + 80 + 32 + 256 + 4 + 24);
        assert!(TARGET_XML.contains(r#"name="orig_rax""#));
        assert!(TARGET_XML.contains(r#"name="fs_base""#));
    }

    #[test]
    fn single_registers_are_where_the_g_packet_has_them() {
        let regs = Regs {
            rip: 0x1122,
            mxcsr: 0x1f80,
            orig_rax: u64::MAX,
            gs_base: 7,
            ..Regs::default()
        };
        assert_eq!(
            regs.register_bytes(RegNum(16)),
            Some(0x1122u64.to_le_bytes().to_vec())
        );
        assert_eq!(
            regs.register_bytes(RegNum(56)),
            Some(0x1f80u32.to_le_bytes().to_vec())
        );
        assert_eq!(regs.register_bytes(ORIG_RAX), Some(vec![0xff; 8]));
        assert_eq!(
            regs.register_bytes(RegNum(59)),
            Some(7u64.to_le_bytes().to_vec())
        );
        assert_eq!(RegNum(60).span(), None);
        assert_eq!(RegNum(40).span(), Some((128 + 8 + 4 + 24 + 80 + 32, 16)));
    }
}
