//! Unit tests of the sending side's HPACK: every block a connection sends decodes, with one
//! stateful decoder as a server keeps, to its request's fields, whatever the order of kinds and
//! the table size the peer allows; repeats go as indexes.

use super::encoder::{Encoder, FieldTable, Item, DEFAULT_TABLE};

type Fields = Vec<(String, String)>;

fn decode(d: &mut loona_hpack::Decoder, block: &[u8]) -> Fields {
    d.decode(block)
        .expect("a block the decoder takes")
        .into_iter()
        .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect()
}

fn kinds(table: &mut FieldTable) -> Vec<(Vec<Item>, Fields)> {
    let h = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    let specs = [
        (
            "GET",
            "/",
            vec![h("User-Agent", "wsgibench"), h("Connection", "keep-alive")],
        ),
        (
            "POST",
            "/items",
            vec![h("user-agent", "wsgibench"), h("x-long", &"v".repeat(900))],
        ),
        (
            "DELETE",
            "/items/7?x=1",
            vec![h("Host", "example.test"), h("accept", "*/*")],
        ),
    ];
    specs
        .into_iter()
        .map(|(m, p, headers)| {
            let items = table.request(m, "https", p, "127.0.0.1:8080", &headers);
            let authority = if p.starts_with("/items/") {
                "example.test"
            } else {
                "127.0.0.1:8080"
            };
            let mut want = vec![h(":method", m), h(":scheme", "https"), h(":path", p)];
            want.push(h(":authority", authority));
            for (k, v) in headers {
                let k = k.to_ascii_lowercase();
                if k != "host" && k != "connection" {
                    want.push((k, v));
                }
            }
            (items, want)
        })
        .collect()
}

#[test]
fn a_repeated_request_goes_as_indexes() {
    let mut table = FieldTable::default();
    let k = kinds(&mut table);
    let mut enc = Encoder::new(table.len(), DEFAULT_TABLE);
    let mut d = loona_hpack::Decoder::new();
    let (mut first, mut again) = (Vec::new(), Vec::new());
    enc.encode(&k[0].0, &table, &mut first);
    enc.encode(&k[0].0, &table, &mut again);
    assert_eq!(decode(&mut d, &first), k[0].1);
    assert_eq!(decode(&mut d, &again), k[0].1);
    // One byte per field the second time: GET, https, /, then two dynamic-table indexes.
    assert_eq!(again, [0x82, 0x87, 0x84, 0xbf, 0xbe]);
    assert!(first.len() > 20, "{first:?}");
}

#[test]
fn any_order_of_kinds_and_any_table_size_decodes_to_each_request() {
    for max in [0, 60, 100, 1_000, DEFAULT_TABLE] {
        let mut table = FieldTable::default();
        let k = kinds(&mut table);
        let mut enc = Encoder::new(table.len(), max);
        let mut d = loona_hpack::Decoder::new();
        d.set_max_allowed_table_size(max);
        d.set_max_table_size(max);
        let mut seed = 7_u64;
        let mut bytes = 0;
        for _ in 0..300 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let (items, want) = &k[(seed >> 33) as usize % k.len()];
            let mut block = Vec::new();
            enc.encode(items, &table, &mut block);
            bytes += block.len();
            assert_eq!(&decode(&mut d, &block), want, "table of {max} bytes");
        }
        // With room for the fields, 300 requests cost little more than their first sends.
        if max == DEFAULT_TABLE {
            assert!(bytes < 3 * 1_000 + 300 * 8, "{bytes} bytes");
        }
    }
}

#[test]
fn a_peer_that_lowers_its_table_gets_size_updates_and_fresh_entries() {
    let mut table = FieldTable::default();
    let k = kinds(&mut table);
    let mut enc = Encoder::new(table.len(), DEFAULT_TABLE);
    let mut d = loona_hpack::Decoder::new();
    for (items, want) in &k {
        let mut block = Vec::new();
        enc.encode(items, &table, &mut block);
        assert_eq!(&decode(&mut d, &block), want);
    }
    // The server's SETTINGS lowers the table to 64 bytes: after the ack, its decoder allows no
    // more, and the next block must shrink the table first.
    enc.peer_table_size(64);
    d.set_max_allowed_table_size(64);
    for round in 0..3 {
        for (items, want) in &k {
            let mut block = Vec::new();
            enc.encode(items, &table, &mut block);
            if round == 0 && items == &k[0].0 {
                assert_eq!(block[..2], [0x20, 0x3f]); // size update to 0, then to 64
            }
            assert_eq!(&decode(&mut d, &block), want);
        }
    }
    // A larger size later changes nothing: the encoder never grows its table.
    enc.peer_table_size(8_192);
    let mut block = Vec::new();
    enc.encode(&k[1].0, &table, &mut block);
    assert_eq!(decode(&mut d, &block), k[1].1);
}
