//! Passing a file descriptor to another process over a Unix socket (`SCM_RIGHTS`), for
//! sharing virtual memory ([`crate::PhysicalMemory::export_fd`]): [`send_fd`] and
//! [`recv_fd`], each with a few bytes of payload (the size, say) in the same message.
//!
//! Rust's standard library has no stable way to send ancillary data, and cudrv depends on
//! no `libc` crate, so this declares the C library's `sendmsg`/`recvmsg` (which the
//! standard library links anyway) and their message structures for 64-bit Linux, where
//! their layout is fixed by the kernel's ABI. Linux only.

use std::ffi::{c_int, c_uint, c_void};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

/// `struct iovec`.
#[repr(C)]
struct IoVec {
    base: *mut c_void,
    len: usize,
}

/// `struct msghdr` (64-bit Linux: `socklen_t` is 32 bits, lengths are `size_t`).
#[repr(C)]
struct MsgHdr {
    name: *mut c_void,
    name_len: c_uint,
    iov: *mut IoVec,
    iov_len: usize,
    control: *mut c_void,
    control_len: usize,
    flags: c_int,
}

impl MsgHdr {
    /// A message with no address, the one buffer `iov` and the control buffer `control`
    /// (room for one descriptor); it points to both, which must outlive its use.
    fn one_fd(iov: &mut IoVec, control: &mut OneFd) -> MsgHdr {
        MsgHdr {
            name: std::ptr::null_mut(),
            name_len: 0,
            iov,
            iov_len: 1,
            control: (control as *mut OneFd).cast(),
            control_len: size_of::<OneFd>(),
            flags: 0,
        }
    }
}

/// `struct cmsghdr` followed by one descriptor (`CMSG_SPACE(sizeof(int))` is 24 bytes:
/// a 16-byte header, the 4-byte descriptor, padding to 8).
#[repr(C, align(8))]
struct OneFd {
    len: usize,
    level: c_int,
    kind: c_int,
    fd: c_int,
    _pad: c_int,
}

/// `SOL_SOCKET` and `SCM_RIGHTS` on Linux.
const SOL_SOCKET: c_int = 1;
const SCM_RIGHTS: c_int = 1;
/// `MSG_CMSG_CLOEXEC`: the received descriptor is closed on exec.
const MSG_CMSG_CLOEXEC: c_int = 0x4000_0000;
/// `CMSG_LEN(sizeof(int))`: the header and the descriptor, without the padding.
const CMSG_LEN_ONE_FD: usize = 16 + 4;

unsafe extern "C" {
    fn sendmsg(socket: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
    fn recvmsg(socket: c_int, msg: *mut MsgHdr, flags: c_int) -> isize;
}

/// Sends `fd` and `payload` (at least one byte) in one message over `socket`. The
/// descriptor stays the caller's; the receiver gets its own (a duplicate).
pub fn send_fd(socket: &UnixStream, fd: BorrowedFd<'_>, payload: &[u8]) -> io::Result<()> {
    if payload.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "send_fd needs at least one byte of payload"));
    }
    let mut iov = IoVec { base: payload.as_ptr().cast_mut().cast(), len: payload.len() };
    let mut control = OneFd { len: CMSG_LEN_ONE_FD, level: SOL_SOCKET, kind: SCM_RIGHTS, fd: fd.as_raw_fd(), _pad: 0 };
    let msg = MsgHdr::one_fd(&mut iov, &mut control);
    // SAFETY: `msg` points to one iovec over `payload` (only read) and one control message
    // holding one open descriptor, all alive for the call; the socket is open.
    let sent = unsafe { sendmsg(socket.as_raw_fd(), &msg, 0) };
    match usize::try_from(sent) {
        Err(_) => Err(io::Error::last_os_error()),
        Ok(n) if n < payload.len() => Err(io::Error::new(io::ErrorKind::WriteZero, "the payload was cut short")),
        Ok(_) => Ok(()),
    }
}

/// Receives a descriptor and up to `payload.len()` bytes sent with [`send_fd`]; returns
/// the descriptor (owned: closed when dropped) and the number of payload bytes. A message
/// without a descriptor is an error.
pub fn recv_fd(socket: &UnixStream, payload: &mut [u8]) -> io::Result<(OwnedFd, usize)> {
    let mut iov = IoVec { base: payload.as_mut_ptr().cast(), len: payload.len() };
    let mut control = OneFd { len: 0, level: 0, kind: 0, fd: -1, _pad: 0 };
    let mut msg = MsgHdr::one_fd(&mut iov, &mut control);
    // SAFETY: `msg` points to one iovec over `payload` and a control buffer with room for
    // one descriptor, all alive and writable for the call; the socket is open.
    let got = unsafe { recvmsg(socket.as_raw_fd(), &mut msg, MSG_CMSG_CLOEXEC) };
    let n = usize::try_from(got).map_err(|_| io::Error::last_os_error())?;
    let has_fd = msg.control_len >= CMSG_LEN_ONE_FD
        && control.len == CMSG_LEN_ONE_FD
        && control.level == SOL_SOCKET
        && control.kind == SCM_RIGHTS
        && control.fd >= 0;
    if !has_fd {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "the message carried no file descriptor"));
    }
    // SAFETY: the kernel installed this new descriptor in this process for us alone.
    Ok((unsafe { OwnedFd::from_raw_fd(control.fd) }, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;

    #[test]
    fn a_descriptor_and_its_payload_cross_a_socket() {
        let (a, b) = UnixStream::pair().unwrap();
        let path = std::env::temp_dir().join(format!("cudrv-fd-passing-{}", std::process::id()));
        let mut file = std::fs::File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file.write_all(b"through the socket").unwrap();
        send_fd(&a, file.as_fd(), &42u64.to_le_bytes()).unwrap();
        let mut payload = [0u8; 8];
        let (fd, n) = recv_fd(&b, &mut payload).unwrap();
        assert_eq!((n, u64::from_le_bytes(payload)), (8, 42));
        assert_ne!(fd.as_raw_fd(), file.as_raw_fd(), "the receiver gets a descriptor of its own");
        let mut received = std::fs::File::from(fd);
        received.rewind().unwrap();
        let mut text = String::new();
        received.read_to_string(&mut text).unwrap();
        assert_eq!(text, "through the socket");
        // No descriptor: refused.
        (&a).write_all(b"x").unwrap();
        assert_eq!(recv_fd(&b, &mut payload).unwrap_err().kind(), io::ErrorKind::InvalidData);
        assert!(send_fd(&a, file.as_fd(), &[]).is_err());
    }
}
