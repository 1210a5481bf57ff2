//! Texture and surface instructions over a texture the test's memory knows by a handle
//! (`GlobalMemory::texture`), with exact expected values.

use cudrv_ptx::{Address, BadAddress, Fault, Format, GlobalMemory, HostMemory, Module, Texture};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";
const HANDLE: u64 = 0x7e57_0000;

/// Host memory that knows one texture, `HANDLE`.
struct WithTexture {
    mem: HostMemory,
    tex: Texture,
}

impl GlobalMemory for WithTexture {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        self.mem.read(addr, out)
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        self.mem.write(addr, data)
    }
    fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress> {
        self.mem.atomic(addr, size, op)
    }
    fn texture(&self, handle: u64) -> Option<Texture> {
        (handle == HANDLE).then_some(self.tex)
    }
}

/// Runs `body` (registers %r, %rd, %f declared; %rd0 = out, %rd1 = the handle) over one
/// thread on a 2x2 texture of `texels` with `tex`'s modes; returns 8 u32 words of out.
fn run(tex: Texture, texels: &[u8], body: &str) -> Result<Vec<u32>, Fault> {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out, .param .u64 t)\n{{\n.reg .b32 %r<64>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<64>;\n\
         ld.param.u64 %rd0, [out];\nld.param.u64 %rd1, [t];\n{body}\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut mem = HostMemory::new();
    let out = mem.alloc(32);
    let base = mem.alloc_from(texels);
    let e = tex.format.bytes() * u64::from(tex.channels);
    let tex = Texture { base, pitch: 2 * e, slice: 4 * e, ..tex };
    let mem = WithTexture { mem, tex };
    m.launch("k", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes(), &HANDLE.to_le_bytes()], &mem)?;
    let bytes = mem.mem.bytes(out, 32).unwrap();
    Ok(bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
}

fn u8_texture(linear: bool, address: Address) -> Texture {
    Texture {
        extent: [2, 2, 1],
        format: Format::U8,
        channels: 1,
        address: [address; 3],
        linear,
        border: [0.5f32.to_bits(), 0, 0, 0],
        levels: 1,
        ..Texture::default()
    }
}

const TEX2D: &str = "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\n\
                     st.global.v4.f32 [%rd0], {%f1, %f2, %f3, %f4};";

fn at(x: f32, y: f32) -> String {
    format!("mov.f32 %f5, 0f{:08X};\nmov.f32 %f6, 0f{:08X};\n{TEX2D}", x.to_bits(), y.to_bits())
}

#[test]
fn linear_filtering_weighs_in_nine_bit_fixed_point() {
    let texels = [0u8, 255, 64, 128];
    let t = u8_texture(true, Address::Clamp);
    let r = |x: f32| f32::from_bits(run(t, &texels, &at(x, 0.5)).unwrap()[0]);
    // The H200 filters 8-bit texels widened to 16 bits (255 -> 65535) and rounds the
    // weighted sum to a 16-bit step (ties up): halfway is 32768/65535, not 0.5.
    assert_eq!(r(1.0), 32768.0 / 65535.0, "halfway between 0 and 1");
    // x - 0.5 = 1/1024: a quarter of a 1/256 step rounds to weight 0.
    assert_eq!(r(0.5 + 1.0 / 1024.0), 0.0);
    // 3/1024: three quarters of a step round to weight 1/256: 65535/256 rounds to 256.
    assert_eq!(r(0.5 + 3.0 / 1024.0), 256.0 / 65535.0);
    // Point filtering; the H200 reads a 1-channel texture's alpha as 0.
    let p = run(u8_texture(false, Address::Clamp), &texels, &at(1.9, 1.2)).unwrap();
    assert_eq!(p[..4], [(128.0f32 / 255.0).to_bits(), 0, 0, 0]);
}

#[test]
fn bilinear_weights_are_what_is_left_of_the_rounded_product() {
    // x - 0.5 = 0.5 (weight 128 of 256) and y - 0.5 = 192.5/256 (weight 193): the corner
    // upper in both weighs 128 * 193 / 256 = 96.5, rounded up to 97; the H200 gives the
    // upper-x, lower-y corner what is left of x's 128 in the upper row: 128 - 97 = 31.
    let t = u8_texture(true, Address::Clamp);
    let at_corner = |texels: [u8; 4]| f32::from_bits(run(t, &texels, &at(1.0, 1.251_953_1)).unwrap()[0]);
    let weighs = |w: u32| ((w * 65535 + 128) >> 8) as f32 / 65535.0;
    assert_eq!(at_corner([0, 0, 0, 255]), weighs(97));
    assert_eq!(at_corner([0, 255, 0, 0]), weighs(31));
    assert_eq!(at_corner([255, 0, 0, 0]), weighs(32));
    assert_eq!(at_corner([0, 0, 255, 0]), weighs(96));
}

#[test]
fn trilinear_weights_round_each_product_of_weights() {
    // Weights 128, 128, 193 of 256: y z weighs 128 * 193 / 256 = 96.5 -> 97 and x y z
    // 48.25 -> 48, so the corner upper in y and z only weighs 97 - 48 = 49 (exact: 48.25).
    let mut texels = [0u8; 8];
    texels[6] = 255;
    let t = Texture { extent: [2, 2, 2], ..u8_texture(true, Address::Clamp) };
    let z = 1.251_953_1f32;
    let body = format!(
        "mov.f32 %f5, 0f3F800000;\nmov.f32 %f6, 0f3F800000;\nmov.f32 %f7, 0f{:08X};\nmov.f32 %f8, 0f00000000;\n\
         tex.3d.v4.f32.f32 {{%f1, %f2, %f3, %f4}}, [%rd1, {{%f5, %f6, %f7, %f8}}];\n\
         st.global.v4.f32 [%rd0], {{%f1, %f2, %f3, %f4}};",
        z.to_bits()
    );
    let r = run(t, &texels, &body).unwrap();
    assert_eq!(f32::from_bits(r[0]), ((49 * 65535 + 128) >> 8) as f32 / 65535.0);
}

#[test]
fn s8_texels_widen_exactly_and_the_sum_rounds_once() {
    // The texture probe's `tex1d_f s8x1 clamp linear` at x = 1.75 weighs its texels 88
    // and -20 by 192 and 64 of 256; the H200 read 0x3ef5e9ec = 15738/32767. Widened
    // exactly (v * 33025/128: 22704.6875 and -5160.15625) the sum is 61 * 33025/128 =
    // 15738.48, rounded once to 15738; widening each texel to an integer first (22705 and
    // -5160) would sum to 15738.75 and read 15739/32767.
    let t = Texture { format: Format::S8, ..u8_texture(true, Address::Clamp) };
    let texels = [88i8, -20, 88, -20].map(|v| v as u8);
    let r = run(t, &texels, &at(0.75, 0.5)).unwrap();
    assert_eq!(r[0], 0x3ef5_e9ec);
    assert_eq!(f32::from_bits(r[0]), (15738.0f64 / 32767.0) as f32);
}

#[test]
fn filtered_f16_rounds_ties_away_from_zero() {
    // Texels -10 and -7 weighed 255 and 1 of 256: -9.98828125, halfway between the f16
    // values -9.984375 and -9.9921875; the H200 reads the one away from zero.
    let texels: Vec<u8> = [0xc900u16, 0xc700, 0xc900, 0xc700].iter().flat_map(|h| h.to_le_bytes()).collect();
    let t = Texture { format: Format::F16, ..u8_texture(true, Address::Clamp) };
    let r = run(t, &texels, &at(0.5 + 1.0 / 512.0, 0.5)).unwrap();
    assert_eq!(f32::from_bits(r[0]), -9.992_187_5);
}

#[test]
fn border_and_wrap_addressing() {
    let texels = [0u8, 255, 64, 128];
    let b = run(u8_texture(false, Address::Border), &texels, &at(-0.5, 0.5)).unwrap();
    // The H200 quantises the border colour to the format: 0.5 in u8 reads 127/255.
    assert_eq!(b[..4], [(127.0f32 / 255.0).to_bits(), 0, 0, 0], "the border colour");
    let wrap = Texture { normalized: true, ..u8_texture(false, Address::Wrap) };
    let w = run(wrap, &texels, &at(1.75, 0.25)).unwrap();
    assert_eq!(w[0], 1f32.to_bits(), "1.75 wraps to texel 1 of row 0");
}

#[test]
fn gather_txq_and_surfaces() {
    let texels = [1u8, 2, 3, 4];
    let t = Texture { read_as_integer: true, ..u8_texture(false, Address::Clamp) };
    let g = run(
        t,
        &texels,
        "mov.f32 %f5, 0f3F800000;\nmov.f32 %f6, 0f3F800000;\n\
         tld4.r.2d.v4.u32.f32 {%r1, %r2, %r3, %r4}, [%rd1, {%f5, %f6}];\n\
         st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};\n\
         txq.width.b32 %r5, [%rd1];\ntxq.channel_order.b32 %r6, [%rd1];\n\
         st.global.v2.u32 [%rd0+16], {%r5, %r6};",
    )
    .unwrap();
    assert_eq!(g[..6], [3, 4, 2, 1, 2, 0x10B0]);
    let s = run(
        t,
        &texels,
        "mov.u32 %r1, 5;\nmov.u32 %r2, 1;\n\
         suld.b.2d.b8.clamp {%r3}, [%rd1, {%r1, %r2}];\n\
         suld.b.2d.b8.zero {%r4}, [%rd1, {%r1, %r2}];\n\
         mov.u32 %r5, 9;\nmov.u32 %r6, 0;\nsust.b.2d.b8.trap [%rd1, {%r6, %r6}], {%r5};\n\
         suld.b.2d.b8.trap {%r7}, [%rd1, {%r6, %r6}];\n\
         st.global.v4.u32 [%rd0], {%r3, %r4, %r7, %r6};",
    )
    .unwrap();
    assert_eq!(s[..3], [4, 0, 9]);
    let trap = run(t, &texels, "mov.u32 %r1, 2;\nsuld.b.2d.b8.trap {%r3}, [%rd1, {%r1, %r1}];");
    assert!(matches!(trap, Err(Fault::IllegalAddress { .. })), "{trap:?}");
}
