//! `ryechain lsp`: the language server on stdio, with the spaces found as for `lint` (flags and
//! environment, overridden by the editor's `initializationOptions`).

use std::path::PathBuf;
use std::sync::Arc;

use super::Context;
use crate::db::Settings;
use crate::lsp::server::{InitOptions, Setup, run};
use crate::lsp::{cache_root, materialise, transport, uri};

/// The bundle name of the embedded system space (as `Context::spaces` names it).
const EMBEDDED_BUNDLE: &str = "ryechain";

pub fn lsp(ctx: &Context<'_>, settings: Settings) -> anyhow::Result<u8> {
    let sys = ctx.sys;
    let xdg = sys.env_var("XDG_CACHE_HOME");
    let home = sys.env_var("HOME");
    let root: Option<PathBuf> = cache_root(xdg.as_deref(), home.as_deref()).and_then(|root| {
        match materialise(&root, EMBEDDED_BUNDLE) {
            Ok(()) => Some(root),
            Err(e) => {
                errln!(
                    "warning: cannot copy the embedded bundle to {} ({e}); go-to-definition into it and rule links are off",
                    root.display()
                );
                None
            }
        }
    });
    let bundle_root = root.clone();
    let materialised = Arc::new(move |bundle: &str, rel: &str| {
        (bundle == EMBEDDED_BUNDLE)
            .then(|| bundle_root.as_ref().map(|r| r.join(bundle).join(rel)))
            .flatten()
    });
    let rule_doc = Arc::new(move |id: &str| {
        let page = root.as_ref()?.join("rules").join(format!("{id}.md"));
        uri::from_path(&page)
    });
    let spaces = |project: &std::path::Path, init: &InitOptions| {
        let scoped = Context {
            sys,
            system_space: init
                .system_space
                .clone()
                .unwrap_or_else(|| ctx.system_space.clone()),
            user_space: init.user_space.clone().or_else(|| ctx.user_space.clone()),
        };
        scoped.spaces(project)
    };
    // "Re-sign this item": `ryechain sign`'s own flow, for the person at the editor (a thread
    // of the server runs it, with the spaces `initialize` named, on the OS the binary runs on).
    let (system_space, user_space) = (ctx.system_space.clone(), ctx.user_space.clone());
    let sign: Arc<crate::lsp::server::SignFn> =
        Arc::new(move |req: &crate::lsp::server::SignRequest| {
            let scoped = Context {
                sys: &crate::system::os::OsSystem,
                system_space: req
                    .system_space
                    .clone()
                    .unwrap_or_else(|| system_space.clone()),
                user_space: req.user_space.clone().or_else(|| user_space.clone()),
            };
            super::sign::editor_call(&scoped, req)
        });
    let setup = Setup {
        sys,
        spaces: &spaces,
        materialised,
        rule_doc,
        settings,
        sign: Some(sign),
    };
    let (conn, io) = transport::stdio();
    let clean = run(&conn, &setup)?;
    drop(conn);
    io.join();
    // The protocol: exit code 0 after `shutdown` then `exit`, 1 when `exit` (or the end of input)
    // came without `shutdown`.
    Ok(if clean { 0 } else { 1 })
}
