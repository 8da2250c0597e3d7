//! The `clawdis` command line, without Tauri.
//!
//! `clawdis serve` runs the backend with no window (Linux servers, CI);
//! `clawdis token` prints the bearer token clients must send. The desktop
//! shell (the root `clawdis` package) parses the same [`Cli`] and runs the
//! menu-bar app when no subcommand is given. This is the binary's front end,
//! so it reports errors with `anyhow`.

mod audit;
mod backend;
mod devices;
mod mcp;
mod runs;
mod secrets;
mod triggers;

pub use runs::RunsAction;
pub use secrets::SecretsAction;
pub use triggers::TriggersAction;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use clawdis_approvals::{Approvals, Channel, Choice, Decider};
use clawdis_browser::settings::{Settings, parse_control_url};
use clawdis_engine::context::{clawdis_home, process_env, state_dir_in};
use clawdis_server::{AppState, ServerConfig, control_token, create_token};
use clawdis_store::{Issuer, Role, Store};

/// `clawdis [--home DIR] [serve|token|app]`.
#[derive(Parser)]
#[command(
    name = "clawdis",
    version,
    about = "Local companion for AI agents: workflows, the clawd browser, approvals"
)]
pub struct Cli {
    /// Clawdis home (settings, browser profile, token, runs). Default: $CLAWDIS_HOME or ~/.clawdis.
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,
    /// What to run; the menu-bar app when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `clawdis` subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Run the menu-bar app (the default).
    App(AppArgs),
    /// Run the backend headless: the browser control API on loopback.
    Serve(ServeArgs),
    /// Print the owner's bearer token, or manage named tokens for agents
    /// and approvers.
    Token(TokenArgs),
    /// List paused runs, or decide one from this terminal.
    Approvals(ApprovalsArgs),
    /// List, show, cancel or export the runs started through the service.
    Runs(RunsArgs),
    /// Webhooks: print the signing secret receivers verify with.
    Webhooks(WebhooksArgs),
    /// The ledger of decisions, refusals and tokens: list, export, verify.
    Audit(AuditArgs),
    /// Paired devices, which approve gates that need a person with a
    /// passkey: pair, list, revoke.
    Devices(DevicesArgs),
    /// List the workflows' cron and file-watch triggers; pause or resume one.
    Triggers(TriggersArgs),
    /// Store a secret you give Clawdis (the LLM's API key) in the keychain.
    Secrets(SecretsArgs),
    /// The MCP server over stdio, for agents that spawn it: workflows,
    /// approvals and the browser of this home's backend (started when none
    /// runs).
    Mcp,
}

/// `clawdis devices pair|list|revoke`.
#[derive(clap::Args)]
pub struct DevicesArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: devices::DevicesAction,
}

/// `clawdis audit list|export|verify`.
#[derive(clap::Args)]
pub struct AuditArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: audit::AuditAction,
}

/// `clawdis secrets set|delete`.
#[derive(clap::Args)]
pub struct SecretsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: SecretsAction,
}

/// `clawdis triggers list|pause|resume`.
#[derive(clap::Args)]
pub struct TriggersArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: TriggersAction,
}

/// `clawdis webhooks secret`.
#[derive(clap::Args)]
pub struct WebhooksArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: WebhooksAction,
}

/// What to do with webhooks.
#[derive(Subcommand)]
pub enum WebhooksAction {
    /// Print the `whsec_` signing secret (created on first use, kept in the
    /// keychain); give it to your receivers' Standard Webhooks verifier.
    Secret,
}

/// `clawdis runs list|show|cancel|export`.
#[derive(clap::Args)]
pub struct RunsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: RunsAction,
}

/// `clawdis approvals list|approve|deny`.
#[derive(clap::Args)]
pub struct ApprovalsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ApprovalsAction,
}

/// What to do with paused runs. Deciding here is deciding as an agent
/// would: a gate that needs a person (`approvers: human`) refuses it.
#[derive(Subcommand)]
pub enum ApprovalsAction {
    /// Print `{approvals: [...]}`: pending runs, then recent decisions.
    List {
        /// Only `pending`, `decided` (expired ones included) or `expired` ones.
        #[arg(long, value_parser = ["pending", "decided", "expired"])]
        status: Option<String>,
    },
    /// Approve run ID (its run id or 8-hex approval id); prints the resume's envelope.
    Approve {
        /// The run id or approval id.
        id: String,
        /// A note kept with the decision.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Deny run ID; prints the resume's envelope.
    Deny {
        /// The run id or approval id.
        id: String,
        /// Why, kept with the decision.
        #[arg(long)]
        reason: Option<String>,
    },
}

/// `clawdis token [create|list|revoke]`.
#[derive(clap::Args)]
pub struct TokenArgs {
    /// Without one: print the owner's token. Give agents a token of their own.
    #[command(subcommand)]
    pub action: Option<TokenAction>,
}

/// What to do with named tokens.
#[derive(Subcommand)]
pub enum TokenAction {
    /// Create a token; prints it on stdout, the only time it is shown. An
    /// approver token waits until the person confirms it in the Clawdis app
    /// (which shows this process); exits 1 if they refuse or do not answer.
    Create {
        /// Its name (1 to 64 of A-Z a-z 0-9 . _ -).
        #[arg(long)]
        name: String,
        /// What it may do.
        #[arg(long, value_enum)]
        role: RoleArg,
        /// How long an approver token waits for the person: 30s, 5m, 1h
        /// (at most 1h).
        #[arg(long, default_value = "5m", value_parser = parse_wait)]
        wait: u64,
    },
    /// List tokens: name, role, created, revoked (never the token).
    List,
    /// Revoke a token by name.
    Revoke {
        /// The token's name.
        name: String,
    },
}

/// A named token's role.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum RoleArg {
    /// Runs workflows and drives the browser; never decides a gate that needs a person.
    Agent,
    /// A person's token: may decide any gate.
    Approver,
}

/// `--wait`: a duration (`30s`, `5m`, `1h`) of at most an hour, in seconds.
pub(crate) fn parse_wait(text: &str) -> Result<u64, String> {
    clawdis_engine::workflow::duration_secs(text)
        .filter(|s| *s <= 3600)
        .ok_or_else(|| format!("{text:?} is not a duration of at most 1h such as 30s, 5m or 1h"))
}

impl Cli {
    /// The Clawdis home: `--home`, else `$CLAWDIS_HOME`, else `~/.clawdis`.
    pub fn home(&self) -> PathBuf {
        self.home
            .clone()
            .unwrap_or_else(|| clawdis_home(&process_env()))
    }
}

/// `clawdis app` flags.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct AppArgs {
    /// Open this window at start; with the app already running, open it there.
    #[arg(long, value_enum, value_name = "WINDOW")]
    pub open: Option<WindowName>,
}

/// The app's windows, as `--open` names them.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowName {
    /// The settings window.
    Settings,
    /// Pending and decided approvals.
    Approvals,
    /// The runs' history, one run as a timeline.
    Runs,
    /// The workflows' schedules and file watches.
    Triggers,
    /// Webhook deliveries and their attempts.
    Deliveries,
    /// The audit ledger, with its verification.
    Ledger,
    /// Paired devices, named tokens, and what processes ask of the person.
    Devices,
    /// The clawd browser's tabs.
    Tabs,
}

/// `clawdis serve` flags; each overrides `<home>/settings.json` for this run.
#[derive(clap::Args, Default)]
pub struct ServeArgs {
    /// Control API URL (default: settings' controlUrl, http://127.0.0.1:18791).
    /// A non-loopback URL means connect only; the API still binds loopback.
    #[arg(long, value_name = "URL")]
    pub control_url: Option<String>,
    /// Control API port (overrides the control URL's port).
    #[arg(long)]
    pub port: Option<u16>,
    /// Chromium's DevTools port (default 18792; 9222 is refused).
    #[arg(long, value_name = "N")]
    pub cdp_port: Option<u16>,
    /// Launch Chromium headless.
    #[arg(long)]
    pub headless: bool,
    /// Only connect to a browser already listening on the CDP port.
    #[arg(long)]
    pub attach_only: bool,
    /// The Chrome/Chromium executable (an absolute path).
    #[arg(long, value_name = "PATH")]
    pub browser: Option<String>,
    /// Never launch a browser (the API still answers).
    #[arg(long)]
    pub no_browser: bool,
}

/// Logs to stderr; `CLAWDIS_LOG` sets the filter (default: info,
/// chromiumoxide errors only; `clawdis mcp`, whose stderr lands in its
/// agent host's log, warnings only).
pub fn init_tracing(command: Option<&Command>) {
    let default = match command {
        Some(Command::Mcp) => "warn",
        _ => "info,chromiumoxide=error",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CLAWDIS_LOG")
                .unwrap_or_else(|_| default.into()),
        )
        .with_writer(std::io::stderr)
        .init();
}

/// Runs a subcommand other than [`Command::App`] (which needs the shell).
pub fn run(home: PathBuf, command: Command) -> Result<()> {
    match command {
        Command::Token(TokenArgs { action: None }) => {
            print_line(&control_token(&home)?);
            Ok(())
        }
        Command::Token(TokenArgs {
            action: Some(action),
        }) => tokens(&home, action),
        Command::Approvals(ApprovalsArgs { action }) => approvals(&home, action),
        Command::Runs(RunsArgs { action }) => runs::runs(&home, action),
        Command::Triggers(TriggersArgs { action }) => triggers::triggers(&home, action),
        Command::Audit(AuditArgs { action }) => audit::audit(&home, action),
        Command::Devices(DevicesArgs { action }) => devices::devices(&home, action),
        Command::Secrets(SecretsArgs { action }) => secrets::secrets(&home, action),
        Command::Webhooks(WebhooksArgs {
            action: WebhooksAction::Secret,
        }) => {
            print_line(&clawdis_approvals::webhooks::secret(&home)?);
            Ok(())
        }
        Command::Serve(args) => serve(home, args),
        Command::Mcp => mcp::mcp(home),
        Command::App(_) => {
            bail!("this clawdis was built without the desktop app; run `clawdis serve`")
        }
    }
}

/// `clawdis token create|list|revoke`, on the store the backend reads.
fn tokens(home: &std::path::Path, action: TokenAction) -> Result<()> {
    let state_dir = state_dir_in(&process_env(), home);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = Store::open_dir(&state_dir)
            .await
            .with_context(|| format!("opening the store in {}", state_dir.display()))?;
        match action {
            TokenAction::Create {
                name,
                role: RoleArg::Agent,
                ..
            } => {
                print_line(&create_token(&store, &name, Role::Agent, &Issuer::cli()).await?);
            }
            TokenAction::Create {
                name,
                role: RoleArg::Approver,
                wait,
            } => print_line(&backend::approver_token(home, &name, wait).await?),
            TokenAction::List => {
                for t in store.list_tokens().await? {
                    let state = t
                        .revoked_at
                        .map_or("live".to_string(), |at| format!("revoked {at}"));
                    print_line(&format!(
                        "{}\t{}\t{}\t{state}",
                        t.name, t.role, t.created_at
                    ));
                }
            }
            TokenAction::Revoke { name } => {
                if !store
                    .revoke_token(&name, &clawdis_store::Issuer::cli())
                    .await?
                {
                    bail!("no live token named {name:?}");
                }
            }
        }
        Ok(())
    })
}

/// Runs `work` on the approvals of `home`'s state directory (where
/// `lobster` and the backend keep runs), on a runtime of its own.
pub(crate) fn on_approvals<T>(
    home: &std::path::Path,
    work: impl AsyncFnOnce(std::sync::Arc<Approvals>) -> Result<T>,
) -> Result<T> {
    let state_dir = state_dir_in(&process_env(), home);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let approvals = Approvals::open(&state_dir)
            .await
            .with_context(|| format!("opening the store in {}", state_dir.display()))?;
        work(approvals).await
    })
}

/// `clawdis approvals list|approve|deny`, on the store the backend reads.
fn approvals(home: &std::path::Path, action: ApprovalsAction) -> Result<()> {
    on_approvals(home, async |approvals| {
        let (id, choice, comment) = match action {
            ApprovalsAction::List { status } => {
                let listed = approvals.list_in(status.as_deref()).await?;
                print_line(&serde_json::to_string_pretty(
                    &serde_json::json!({ "approvals": listed }),
                )?);
                return Ok(());
            }
            ApprovalsAction::Approve { id, comment } => (id, Choice::Approve, comment),
            ApprovalsAction::Deny { id, reason } => (id, Choice::Deny, reason),
        };
        // This terminal is where agents run too: it is never proof of a person.
        let decider = Decider {
            by: Some("cli".to_string()),
            via: Channel::Cli,
            presence: None,
            seen: None,
            comment,
        };
        let envelope = approvals.decide(&id, choice, decider).await?;
        print_line(&serde_json::to_string_pretty(&envelope)?);
        Ok(())
    })
}

/// A backend ready to serve: where to listen and the shared state.
pub struct Backend {
    /// The loopback address of the control API.
    pub addr: SocketAddr,
    /// The control API's state (the browser manager, approvals).
    pub state: std::sync::Arc<AppState>,
    /// Where paused runs are stored.
    pub state_dir: PathBuf,
}

/// Loads `<home>/settings.json`, applies `args` over it, validates it and
/// builds the backend (creating the control token on first start).
pub fn backend(home: PathBuf, args: ServeArgs) -> Result<Backend> {
    let mut settings = Settings::load(&home)?;
    settings.headless |= args.headless;
    settings.attach_only |= args.attach_only;
    if let Some(url) = args.control_url {
        settings.control_url = url;
    }
    if let Some(port) = args.cdp_port {
        settings.cdp_port = port;
    }
    if let Some(browser) = args.browser {
        settings.executable_path = Some(browser);
    }
    for warning in settings.validate().into_iter().filter(|i| i.warning) {
        tracing::warn!(field = warning.field, "{}", warning.message);
    }
    let errors: Vec<String> = settings
        .validate()
        .into_iter()
        .filter(|i| !i.warning)
        .map(|i| format!("{}: {}", i.field, i.message))
        .collect();
    if !errors.is_empty() {
        bail!(
            "invalid settings in {}:\n  {}",
            Settings::path(&home).display(),
            errors.join("\n  ")
        );
    }
    // The workflow service's keys of the same file (webhooks and their
    // retries), checked now so that a mistake stops the start with its field.
    let service = clawdis_approvals::ServiceSettings::load(&home)?;
    // The API always binds loopback; a remote control URL only makes the
    // browser connect-only (Settings::connect_only).
    let (_, configured_port) = parse_control_url(&settings.control_url)?;
    let port = args.port.unwrap_or(configured_port);
    // Once, where the backend starts: every secret read after this falls
    // back to files quietly (issue 44: each command said it, four times at
    // this start).
    if let Some(why) = clawdis_secrets::Secrets::new(&home).keychain_problem() {
        tracing::warn!(
            "No keychain answered ({why}), so Clawdis keeps its secrets in 0600 files under {}. \
             To keep them in a keychain, run a Secret Service (such as gnome-keyring) in this \
             login session and start again; to choose files and not be told, set \
             CLAWDIS_KEYCHAIN=off.",
            home.join("secrets").display()
        );
    }
    let token = control_token(&home)
        .with_context(|| format!("creating the control token in {}", home.display()))?;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    // Runs live where `lobster` keeps them: LOBSTER_STATE_DIR, else the home.
    let state_dir = state_dir_in(&process_env(), &home);
    let state = AppState::new(ServerConfig {
        home,
        settings,
        token,
        no_browser: args.no_browser,
        control_port: port,
        state_dir: state_dir.clone(),
        service,
    });
    Ok(Backend {
        addr,
        state,
        state_dir,
    })
}

/// `clawdis serve`: the backend with no window, until Ctrl-C or SIGTERM.
pub fn serve(home: PathBuf, args: ServeArgs) -> Result<()> {
    let Backend { addr, state, .. } = backend(home, args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let shutdown = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {},
                        _ = term.recv() => {},
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no SIGTERM handler; stop with Ctrl-C");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
            tracing::info!("shutting down");
        };
        clawdis_server::serve(addr, state, shutdown)
            .await
            .with_context(|| format!("serving on {addr}"))
    });
    // A webhook attempt a receiver holds open does not hold up the exit:
    // the next start sends it again (a delivery keeps its id).
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    served
}

/// A command's one line of output on stdout.
#[expect(clippy::print_stdout, reason = "the command's output, not a log")]
pub(crate) fn print_line(line: &str) {
    println!("{line}");
}
