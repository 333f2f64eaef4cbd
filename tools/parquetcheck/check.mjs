#!/usr/bin/env node
// check.mjs reads locus commits Parquet parts with DuckDB, a reader that shares
// no code with parquet-go (which wrote them), and prints what it sees as JSON,
// so that a test can compare it against `git log` for the same repository.
//
// Usage:
//   node check.mjs <dir | file.parquet | glob> [commit_id ...]
//   node check.mjs --table <file.parquet>
//
// --table reads any one table (graph nodes or edges, say) whole and prints
// {reader, columns, rows, kv, values}: values holds every row as an object,
// BLOB columns as hex strings (null stays null). DuckDB rejects string columns
// that are not valid UTF-8 while reading them, so a clean exit means every
// value decoded.
//
// A directory is read as <dir>/**/*.parquet. With commit ids, only those
// commits are described (ids that are absent are listed under "missing");
// without, every commit is.
//
// Output (one JSON object on stdout):
//   reader            DuckDB version string
//   glob              the pattern given to read_parquet
//   columns           [{name, type}] as DuckDB types them
//   files             [{file, rows, kv}] per Parquet file (kv: key-value metadata)
//   total_rows        rows over all files
//   distinct_commits  distinct commit_id values
//   commits           {commit_id: {rows, files, binary_paths, message,
//                      message_raw_hex, author_name, author_email, raw_paths,
//                      is_merge, num_parents, parent_id,
//                      commit_time, author_time, diff_bytes, uniform}}
//       files is the sorted list of [path, additions, deletions, status];
//       raw_paths lists [path, hex of path_raw] for rows whose path_raw is set;
//       commit_time/author_time are unix seconds; uniform is false when the
//       commit-level columns differ between the commit's rows.
//   missing           requested commit ids not found
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

function usage(msg) {
  if (msg) process.stderr.write(`check.mjs: ${msg}\n`);
  process.stderr.write('usage: node check.mjs <dir | file.parquet | glob> [commit_id ...]\n       node check.mjs --table <file.parquet>\n');
  process.exit(2);
}

const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;

// plain turns DuckDB's JS values into plain JSON values (BIGINT comes back as BigInt).
function plain(v) {
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) return v.toString();
    return Number(v);
  }
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

const cmpStr = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// hexBlobs turns BLOB values (Uint8Array) into hex strings so they survive JSON.
function hexBlobs(v) {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(hexBlobs);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hexBlobs(x)]));
  }
  return v;
}

async function table(file) {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJS();
  const src = `read_parquet(${sqlString(file)}, hive_partitioning = false)`;
  const out = { reader: null, columns: [], rows: 0, kv: {}, values: [] };
  out.reader = `duckdb ${(await q('SELECT version() AS v'))[0].v}`;
  const cols = plain(await q(`DESCRIBE SELECT * FROM ${src}`));
  out.columns = cols.map((r) => ({ name: r.column_name, type: r.column_type }));
  const kv = await q(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlString(file)})`);
  out.kv = Object.fromEntries(kv.map((r) => [r.k, r.v]));
  const blobs = out.columns.filter((c) => c.type === 'BLOB').map((c) => c.name);
  const sel = out.columns
    .map((c) => (blobs.includes(c.name) ? `CASE WHEN "${c.name}" IS NULL THEN NULL ELSE hex("${c.name}") END AS "${c.name}"` : `"${c.name}"`))
    .join(', ');
  out.values = hexBlobs(plain(await q(`SELECT ${sel} FROM ${src}`)));
  out.rows = out.values.length;
  con.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

async function main() {
  if (process.argv[2] === '--table') {
    if (!process.argv[3] || process.argv.length > 4) usage('--table takes one Parquet file');
    return table(process.argv[3]);
  }
  const [target, ...ids] = process.argv.slice(2);
  if (!target) usage('missing the Parquet directory, file or glob');
  for (const id of ids) {
    if (!/^[0-9a-f]{40}$/.test(id)) usage(`commit id ${JSON.stringify(id)}: want 40 lower-case hex digits`);
  }
  let glob = target;
  try {
    if ((await stat(target)).isDirectory()) glob = path.join(target, '**', '*.parquet');
  } catch {
    // Not a path on disk: a glob, handed to DuckDB as is.
  }

  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const q = async (sql) => plain((await con.runAndReadAll(sql)).getRowObjectsJS());
  const src = `read_parquet(${sqlString(glob)}, hive_partitioning = false)`;

  const out = { reader: null, glob, columns: [], files: [], total_rows: 0, distinct_commits: 0, commits: {}, missing: [] };
  out.reader = `duckdb ${(await q('SELECT version() AS v'))[0].v}`;
  out.columns = (await q(`DESCRIBE SELECT * FROM ${src}`)).map((r) => ({ name: r.column_name, type: r.column_type }));

  const files = await q(`SELECT file_name, num_rows FROM parquet_file_metadata(${sqlString(glob)}) ORDER BY file_name`);
  const kv = await q(`SELECT file_name, decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlString(glob)})`);
  out.files = files.map((f) => ({
    file: f.file_name,
    rows: f.num_rows,
    kv: Object.fromEntries(kv.filter((r) => r.file_name === f.file_name).map((r) => [r.k, r.v])),
  }));

  const [tot] = await q(`SELECT count(*) AS n, count(DISTINCT commit_id) AS c FROM ${src}`);
  out.total_rows = tot.n;
  out.distinct_commits = tot.c;

  const where = ids.length ? `WHERE commit_id IN (${ids.map(sqlString).join(', ')})` : '';
  const rows = await q(`
    SELECT commit_id,
           count(*) AS rows,
           list(struct_pack(p := path, a := additions, d := deletions, s := status, b := is_binary)) AS files,
           any_value(message) AS message,
           any_value(author_name) AS author_name,
           any_value(author_email) AS author_email,
           list(struct_pack(p := path, r := hex(path_raw))) FILTER (WHERE path_raw IS NOT NULL) AS raw_paths,
           any_value(CASE WHEN message_raw IS NULL THEN NULL ELSE hex(message_raw) END) AS message_raw_hex,
           bool_or(is_merge) AS is_merge,
           any_value(num_parents) AS num_parents,
           any_value(parent_id) AS parent_id,
           any_value(epoch_ms(commit_time)) AS commit_ms,
           any_value(epoch_ms(author_time)) AS author_ms,
           sum(coalesce(octet_length(diff), 0)) AS diff_bytes,
           count(DISTINCT message) = 1 AND count(DISTINCT commit_time) = 1 AND count(DISTINCT author_time) = 1
             AND count(DISTINCT is_merge) = 1 AND count(DISTINCT num_parents) = 1
             AND count(DISTINCT parent_id) = 1 AS uniform
    FROM ${src}
    ${where}
    GROUP BY commit_id
    ORDER BY commit_id`);
  for (const r of rows) {
    const fl = r.files.map((f) => [f.p, f.a, f.d, f.s]);
    fl.sort((x, y) => cmpStr(x[0], y[0]) || cmpStr(x[3], y[3]) || x[1] - y[1] || x[2] - y[2]);
    out.commits[r.commit_id] = {
      rows: r.rows,
      files: fl,
      binary_paths: r.files.filter((f) => f.b).map((f) => f.p).sort(cmpStr),
      message: r.message,
      message_raw_hex: r.message_raw_hex,
      author_name: r.author_name,
      author_email: r.author_email,
      raw_paths: (r.raw_paths || []).map((x) => [x.p, x.r]).sort((x, y) => cmpStr(x[0], y[0])),
      is_merge: r.is_merge,
      num_parents: r.num_parents,
      parent_id: r.parent_id,
      // Timestamps are read as DuckDB timestamps; epoch_ms gives unix milliseconds.
      commit_time: Math.floor(r.commit_ms / 1000),
      author_time: Math.floor(r.author_ms / 1000),
      diff_bytes: r.diff_bytes,
      uniform: r.uniform,
    };
  }
  out.missing = ids.filter((id) => !(id in out.commits));

  con.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}

main().catch((err) => {
  process.stderr.write(`check.mjs: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
