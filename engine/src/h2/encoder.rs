//! HPACK on the sending side (RFC 7541): a load's request fields, split once into what the
//! static table holds whole and the rest, and each connection's encoder, which sends the rest
//! as literals with incremental indexing the first time and as one-byte indexes after, as
//! browsers and h2load do, so a server decodes what a real client would send it. The dynamic
//! table never exceeds the peer's SETTINGS_HEADER_TABLE_SIZE (4,096 until it says otherwise)
//! and never evicts: a field that does not fit goes as a literal without indexing.

/// The table size every decoder starts with (RFC 7541 §4.2, RFC 9113 §6.5.2).
pub const DEFAULT_TABLE: usize = 4_096;
/// Entries in HPACK's static table; the dynamic table's newest entry comes next.
const STATIC_ENTRIES: usize = 61;

/// Headers that are HTTP/1.1's connection management and must not appear in HTTP/2
/// (RFC 9113 §8.2.2); `host` becomes `:authority`.
const DROPPED: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// One field of a request: the index of a static-table entry that holds it whole, or a field
/// of the load's `FieldTable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Static(u8),
    Field(u16),
}

/// A field the static table does not hold whole: its name (sent by static index when it has
/// one) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Literal {
    name_index: Option<usize>,
    name: String,
    value: String,
}

impl Literal {
    /// Its size in a dynamic table (RFC 7541 §4.1).
    fn size(&self) -> usize {
        self.name.len() + self.value.len() + 32
    }
}

/// The distinct literal fields of a load's requests, shared by its connections.
#[derive(Debug, Default)]
pub struct FieldTable {
    fields: Vec<Literal>,
}

impl FieldTable {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    fn add(&mut self, name_index: Option<usize>, name: &str, value: &str) -> Item {
        let f = Literal {
            name_index,
            name: name.to_owned(),
            value: value.to_owned(),
        };
        let id = self.fields.iter().position(|g| *g == f).unwrap_or_else(|| {
            self.fields.push(f);
            self.fields.len() - 1
        });
        Item::Field(u16::try_from(id).expect("fewer than 65,536 distinct fields"))
    }

    /// A request's fields (pseudo-headers first, names lowercased, HTTP/1.1's connection
    /// headers dropped, `host` as `:authority` unless one is given); `:scheme` is `https` over
    /// TLS, `http` in clear text (RFC 9113 §8.3.1: the scheme of the target URI).
    pub fn request(
        &mut self,
        method: &str,
        scheme: &str,
        path: &str,
        host: &str,
        headers: &[(String, String)],
    ) -> Vec<Item> {
        let mut items = vec![match method {
            "GET" => Item::Static(2),
            "POST" => Item::Static(3),
            m => self.add(Some(2), ":method", m),
        }];
        items.push(match scheme {
            "http" => Item::Static(6),
            "https" => Item::Static(7),
            s => self.add(Some(6), ":scheme", s),
        });
        items.push(match path {
            "/" => Item::Static(4),
            p => self.add(Some(4), ":path", p),
        });
        let authority = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("host"))
            .map_or(host, |(_, v)| v.as_str());
        items.push(self.add(Some(1), ":authority", authority));
        for (k, v) in headers {
            let name = k.to_ascii_lowercase();
            let te = name == "te" && !v.eq_ignore_ascii_case("trailers");
            if !DROPPED.contains(&name.as_str()) && !te {
                items.push(self.add(None, &name, v));
            }
        }
        items
    }
}

/// One connection's encoder: where each field of the load sits in its dynamic table.
#[derive(Debug)]
pub struct Encoder {
    /// Per field of the `FieldTable`: the order in which it was inserted, if it was.
    at: Vec<Option<usize>>,
    inserted: usize,
    used: usize,
    max: usize,
    /// A size update owed at the start of the next block (the peer lowered its table size).
    resize: Option<usize>,
}

impl Encoder {
    /// An encoder for a load with `fields` literal fields and a peer table of `max` bytes.
    pub fn new(fields: usize, max: usize) -> Encoder {
        Encoder {
            at: vec![None; fields],
            inserted: 0,
            used: 0,
            max,
            resize: None,
        }
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE. Lower than the size used so far: the table is
    /// emptied and the next block starts with size updates to 0 and to the new size (RFC 7541
    /// §4.2, §6.3); higher: kept as it is (never grown past what the encoder started with).
    pub fn peer_table_size(&mut self, size: u32) {
        let size = size as usize;
        if size >= self.max {
            return;
        }
        self.max = size;
        self.resize = Some(size);
        self.at.iter_mut().for_each(|a| *a = None);
        self.inserted = 0;
        self.used = 0;
    }

    /// Append the header block of a request made of `items`.
    pub fn encode(&mut self, items: &[Item], table: &FieldTable, out: &mut Vec<u8>) {
        if let Some(size) = self.resize.take() {
            put_int(out, 0x20, 5, 0);
            put_int(out, 0x20, 5, size);
        }
        for item in items {
            let id = match *item {
                Item::Static(i) => {
                    out.push(0x80 | i);
                    continue;
                }
                Item::Field(id) => usize::from(id),
            };
            let f = &table.fields[id];
            if let Some(order) = self.at[id] {
                put_int(out, 0x80, 7, STATIC_ENTRIES + self.inserted - order);
            } else if self.used + f.size() <= self.max {
                put_literal(out, 0x40, 6, f);
                self.at[id] = Some(self.inserted);
                self.inserted += 1;
                self.used += f.size();
            } else {
                put_literal(out, 0x00, 4, f);
            }
        }
    }
}

/// A literal field: with incremental indexing (`high` 0x40, a 6-bit name index) or without
/// (0x00, 4 bits); never Huffman-coded.
fn put_literal(out: &mut Vec<u8>, high: u8, bits: u32, f: &Literal) {
    match f.name_index {
        Some(i) => put_int(out, high, bits, i),
        None => {
            out.push(high);
            put_int(out, 0x00, 7, f.name.len());
            out.extend_from_slice(f.name.as_bytes());
        }
    }
    put_int(out, 0x00, 7, f.value.len());
    out.extend_from_slice(f.value.as_bytes());
}

/// An HPACK integer with an `n`-bit prefix after the bits `high` (RFC 7541 §5.1).
fn put_int(out: &mut Vec<u8>, high: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(high | v as u8);
        return;
    }
    out.push(high | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}
