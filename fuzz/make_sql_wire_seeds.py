#!/usr/bin/env python3
"""Writes seeds/sql_wire/ in the sql_wire target's input format (see fuzz_targets/sql_wire.rs): byte 0
the mode, then [tag][len: u16 BE][body] frames (modes 1, 3) or raw protocol bytes (modes 0, 2)."""
import os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds', 'sql_wire'))
import struct
def fr(tag, body):
    return tag + struct.pack('>H', len(body)) + body
def q(sql): return fr(b'Q', sql.encode())
def cstr(s): return s.encode() + b'\0'
def msg(tag, body): return tag + struct.pack('>I', len(body)+4) + body
seeds = {}
seeds['simple_select'] = b'\x01' + q("SELECT id, name, score FROM fuzz.people WHERE score IS NOT NULL ORDER BY id LIMIT 10")
seeds['simple_several'] = b'\x01' + q("SELECT count(*), max(day), min(name) FROM people; SELECT * FROM fuzz.secrets") + q("SELECT 1 + 2 AS three, 'a' || 'b', now() IS NOT NULL") + q("")
ext = fr(b'P', cstr("s1") + cstr("SELECT name, score FROM fuzz.people WHERE id = $1 AND ok = $2") + struct.pack('>H', 2) + struct.pack('>II', 23, 16))
ext += fr(b'B', cstr("") + cstr("s1") + struct.pack('>HH', 1, 0) + struct.pack('>H', 2) + struct.pack('>I', 1) + b'2' + struct.pack('>I', 1) + b'f' + struct.pack('>HH', 1, 0))
ext += fr(b'D', b'S' + cstr("s1")) + fr(b'D', b'P' + cstr("")) + fr(b'E', cstr("") + struct.pack('>I', 0)) + fr(b'S', b'')
ext += fr(b'B', cstr("p2") + cstr("s1") + struct.pack('>H', 0) + struct.pack('>H', 2) + struct.pack('>I', 4) + struct.pack('>i', 1) + struct.pack('>i', -1) + struct.pack('>H', 0))
ext += fr(b'E', cstr("p2") + struct.pack('>I', 1)) + fr(b'C', b'P' + cstr("p2")) + fr(b'C', b'S' + cstr("s1")) + fr(b'S', b'')
seeds['extended_param'] = b'\x01' + ext
psql_d = """SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' WHEN 'I' THEN 'partitioned index' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','v','m','S','f','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2;"""
psql_d_table = """SELECT a.attname,
  pg_catalog.format_type(a.atttypid, a.atttypmod),
  (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true)
   FROM pg_catalog.pg_attrdef d
   WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef),
  a.attnotnull
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname = 'people') AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;"""
seeds['psql_d'] = b'\x01' + q(psql_d) + q(psql_d_table)
seeds['information_schema'] = b'\x01' + q("SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 2, 3") + q("SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'people'")
seeds['session_statements'] = b'\x03' + q("SELECT version(); SHOW transaction_isolation; SET application_name = 'x'") + q("BEGIN") + q("SAVEPOINT a") + q("SELECT 1/0") + q("ROLLBACK TO a") + q("COMMIT") + q("SELECT current_database(), current_schema()")
seeds['refused'] = b'\x01' + q("CREATE TABLE t (a int)") + q("COPY fuzz.people TO STDOUT") + q("SELECT * FROM read_parquet('/etc/passwd')") + q("SET datafusion.execution.batch_size = 1") + q("INSERT INTO fuzz.people VALUES (9, 'x', 1.0, NULL, NULL)")
seeds['rewrites'] = b'\x01' + q("SELECT (information_schema._pg_expandarray(ARRAY[1,2])).n, to_regtype('int4'), id, id FROM fuzz.people") + q("SELECT * FROM generate_series(1, 5) UNION ALL SELECT id FROM fuzz.people")
# Raw: SSL request (declined), then a startup and a wrong password.
startup = struct.pack('>I', 196608) + cstr("user") + cstr("nobody") + cstr("database") + cstr("default") + b'\0'
raw = struct.pack('>II', 8, 80877103) + struct.pack('>I', len(startup)+4) + startup + msg(b'p', cstr("wrong"))
seeds['raw_startup'] = b'\x00' + raw
seeds['raw_cancel'] = b'\x00' + struct.pack('>IIII', 16, 80877102, 1234, 5678)
# Signed in by the harness, then the protocol's own framing.
seeds['raw_after_signin'] = b'\x02' + msg(b'Q', cstr("SELECT name FROM fuzz.people WHERE name LIKE 'a%'")) + msg(b'P', cstr("") + cstr("SELECT $1::text") + struct.pack('>H', 0)) + msg(b'B', cstr("") + cstr("") + struct.pack('>HH', 0, 1) + struct.pack('>I', 2) + b'hi' + struct.pack('>H', 0)) + msg(b'E', cstr("") + struct.pack('>I', 0)) + msg(b'S', b'') + msg(b'X', b'')
for name, data in seeds.items():
    open(name, 'wb').write(data)
    print(name, len(data))
