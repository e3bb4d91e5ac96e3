//! Deleting a raw file from the dataset page's files list (WRITE access, as the API): a
//! confirmation step first, where a box makes it an erasure, the API's `DELETE ...?erase=true`:
//! the file's rows also leave every retained commit (docs/guide.md, History).

use actix_web::web;
use maud::{html, Markup};

use crate::auth::Write;
use crate::state::AppState;
use crate::web::dataset::{base, confirmation};
use crate::web::guard::{OnDataset, Posted};
use crate::web::page::{ok, see_other, PageResult};
use crate::web::session::Viewer;

/// The question, with the erasure box (unticked).
fn question(viewer: &Viewer, url: &str, version: i64, filename: &str) -> Markup {
    let q = html! { "Delete the file " code { (filename) } " and all its rows from version " (version) "?" };
    let action = format!("{url}/files/{version}/{filename}/delete");
    let fields = html! {
        div.check #erase-choice {
            input type="checkbox" id="erase" name="erase" value="yes";
            label for="erase" { "Erase its rows from history too (cannot be undone): earlier commits, as-of reads and the Delta log no longer hold them" }
        }
    };
    let yes = html! { button.danger type="submit" { "Yes, delete" } };
    confirmation(viewer, "Delete a file?", q, &action, fields, yes, url)
}

/// `POST .../files/{version}/{filename}/delete`: the question, then the deletion (an erasure
/// when its box was ticked).
pub(super) async fn post_delete_file(
    state: web::Data<AppState>,
    path: web::Path<(String, String, String, i64, String)>,
    Posted { viewer, pass, form }: Posted<OnDataset<Write>>,
) -> PageResult {
    let (_, _, _, version, filename) = path.into_inner();
    let url = base(pass.record());
    if form.get("confirm") != Some("yes") {
        return Ok(ok(question(&viewer, &url, version, &filename)));
    }
    let erase = form.get("erase") == Some("yes");
    state
        .engine
        .delete_file(&pass, version, &filename, erase)
        .await?;
    let what = if erase {
        "deleted, and its rows erased from every retained commit"
    } else {
        "deleted"
    };
    let done = crate::web::done::query(&viewer, &format!("{filename} has been {what}."));
    Ok(see_other(&format!("{url}?version={version}&{done}")))
}
