//! Two build steps for the service binary (issue 57, docs/DESIGN.md "Build timings"):
//!
//! - Swagger UI's files for the docs page (`/api/docs`), taken from the release archive that
//!   `utoipa-swagger-ui-vendored` carries (no download) and gzipped into `OUT_DIR`. Only the five
//!   files the page loads: the archive's `dist` also holds three other bundles and every source
//!   map, 9.4 MB that the binary used to carry.
//! - Packed relative relocations (DT_RELR) where the C library can load them. A
//!   position-independent executable carries one 24-byte `.rela.dyn` entry per pointer stored in
//!   its data (vtables, static tables, string slices): 5.9 MB of the release binary. DT_RELR packs
//!   runs of them into bitmaps, and glibc 2.36 and later apply them at start as before (ASLR
//!   unchanged). An older glibc would refuse to start such a binary, so the flag is only passed
//!   when the glibc being linked against has the `GLIBC_ABI_DT_RELR` version, and never when
//!   cross-compiling.

use std::env;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;

/// The files the docs page loads, as named in Swagger UI's `dist` folder, with the content type
/// `src/openapi/docs.rs` serves each with (it includes the table build.rs writes from this one).
const DOCS_FILES: [(&str, &str); 5] = [
    ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
    (
        "swagger-ui-standalone-preset.js",
        "text/javascript; charset=utf-8",
    ),
    ("swagger-ui.css", "text/css; charset=utf-8"),
    ("index.css", "text/css; charset=utf-8"),
    ("favicon-32x32.png", "image/png"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=RAPID_NO_RELR");
    docs_files();
    if env::var_os("RAPID_NO_RELR").is_none() && native_linux_gnu() && glibc_loads_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

fn docs_files() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR")).join("docs");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/docs");
    let archive = std::io::Cursor::new(utoipa_swagger_ui_vendored::SWAGGER_UI_VENDORED);
    let mut zip = zip::ZipArchive::new(archive).expect("Swagger UI's archive");
    // The archive's one top folder is named after the release (swagger-ui-5.17.14/dist/...).
    let top = zip
        .by_index(0)
        .expect("an entry")
        .name()
        .split('/')
        .next()
        .unwrap_or("")
        .to_owned();
    let mut table = String::from("[\n");
    for (name, content_type) in DOCS_FILES {
        let mut bytes = Vec::new();
        zip.by_name(&format!("{top}/dist/{name}"))
            .unwrap_or_else(|e| panic!("{name} is not in Swagger UI's archive: {e}"))
            .read_to_end(&mut bytes)
            .expect("read from Swagger UI's archive");
        let gz_path = out.join(format!("{name}.gz"));
        let file = std::fs::File::create(&gz_path).expect("create");
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::best());
        gz.write_all(&bytes).expect("write");
        gz.finish().expect("finish");
        table += &format!("    ({name:?}, {content_type:?}, include_bytes!({gz_path:?})),\n");
    }
    table += "]\n";
    std::fs::write(out.join("files.rs"), table).expect("write files.rs");
}

fn native_linux_gnu() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("TARGET") == var("HOST")
}

/// Whether the libc.so.6 the C compiler (rustc's linker driver) links against defines the
/// `GLIBC_ABI_DT_RELR` version, which glibc added with its DT_RELR support (2.36).
fn glibc_loads_relr() -> bool {
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let Ok(out) = Command::new(cc).arg("-print-file-name=libc.so.6").output() else {
        return false;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let Ok(bytes) = std::fs::read(&path) else {
        return false;
    };
    let marker = b"GLIBC_ABI_DT_RELR";
    bytes.windows(marker.len()).any(|w| w == marker)
}
