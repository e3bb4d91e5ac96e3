//! Finding the end of a `Transfer-Encoding: chunked` body in a byte stream, without decoding it,
//! so the front knows where the next request head starts. actix-http does the real decoding;
//! anything unexpected here makes the front stop judging the connection (`Lost`) rather than
//! guess, and actix-http then refuses the body itself.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChunkState {
    /// Reading a chunk-size line: hex digits so far, and whether an extension (`;...`) started.
    Size {
        size: u64,
        digits: u32,
        extension: bool,
    },
    /// Saw the CR ending a size line.
    SizeLf {
        size: u64,
    },
    /// Inside chunk data.
    Data {
        remaining: u64,
    },
    /// After chunk data: the CRLF.
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until an empty one. `empty` while the line is empty.
    Trailer {
        empty: bool,
    },
    TrailerLf {
        empty: bool,
    },
    /// The body is over.
    Done,
    /// Not a chunked body this tracker understands.
    Lost,
}

impl ChunkState {
    pub(super) fn start() -> ChunkState {
        ChunkState::Size {
            size: 0,
            digits: 0,
            extension: false,
        }
    }

    /// Consumes bytes of `buf` while the body lasts; returns how many belong to the body. Stops
    /// early at `Done` (the rest is the next request) or `Lost`.
    pub(super) fn advance(&mut self, buf: &[u8]) -> usize {
        let mut i = 0;
        while i < buf.len() {
            match *self {
                ChunkState::Done | ChunkState::Lost => return i,
                ChunkState::Data { remaining } => {
                    let n = remaining.min((buf.len() - i) as u64);
                    i += n as usize;
                    *self = if remaining == n {
                        ChunkState::DataCr
                    } else {
                        ChunkState::Data {
                            remaining: remaining - n,
                        }
                    };
                    continue;
                }
                _ => {}
            }
            *self = self.step(buf[i]);
            i += 1;
        }
        i
    }

    fn step(self, b: u8) -> ChunkState {
        match self {
            ChunkState::Size {
                size,
                digits,
                extension,
            } => match b {
                b'\r' if digits > 0 => ChunkState::SizeLf { size },
                b'\n' if digits > 0 => Self::after_size(size),
                _ if extension => self,
                b';' | b' ' | b'\t' if digits > 0 => ChunkState::Size {
                    size,
                    digits,
                    extension: true,
                },
                _ => match (b as char).to_digit(16) {
                    Some(d) if digits < 15 => ChunkState::Size {
                        size: size * 16 + d as u64,
                        digits: digits + 1,
                        extension,
                    },
                    _ => ChunkState::Lost,
                },
            },
            ChunkState::SizeLf { size } if b == b'\n' => Self::after_size(size),
            ChunkState::DataCr if b == b'\r' => ChunkState::DataLf,
            ChunkState::DataCr | ChunkState::DataLf if b == b'\n' => ChunkState::start(),
            ChunkState::Trailer { empty } => match b {
                b'\r' => ChunkState::TrailerLf { empty },
                b'\n' if empty => ChunkState::Done,
                b'\n' => ChunkState::Trailer { empty: true },
                _ => ChunkState::Trailer { empty: false },
            },
            ChunkState::TrailerLf { empty } if b == b'\n' => {
                if empty {
                    ChunkState::Done
                } else {
                    ChunkState::Trailer { empty: true }
                }
            }
            _ => ChunkState::Lost,
        }
    }

    fn after_size(size: u64) -> ChunkState {
        if size == 0 {
            ChunkState::Trailer { empty: true }
        } else {
            ChunkState::Data { remaining: size }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_end_of_a_chunked_body() {
        let body = b"5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1";
        let mut s = ChunkState::start();
        let n = s.advance(body);
        assert_eq!(s, ChunkState::Done);
        assert_eq!(&body[n..], b"GET / HTTP/1.1");
    }

    #[test]
    fn byte_by_byte_equals_all_at_once_and_trailers_are_skipped() {
        let body = b"a\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\nrest";
        let mut s = ChunkState::start();
        let mut used = 0;
        for b in body.iter() {
            used += s.advance(std::slice::from_ref(b));
            if s == ChunkState::Done {
                break;
            }
        }
        assert_eq!(&body[used..], b"rest");
    }

    #[test]
    fn garbage_is_lost_not_guessed() {
        for bad in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"5\r\nhelloXX",
            b"fffffffffffffffff\r\n",
        ] {
            let mut s = ChunkState::start();
            s.advance(bad);
            assert_eq!(s, ChunkState::Lost, "{bad:?}");
        }
    }
}
