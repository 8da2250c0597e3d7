//! A phone for the passkey and live-view tests: real Chromium, headless,
//! with its WebAuthn virtual authenticator (user verification on), driven
//! over CDP.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chromiumoxide::Browser;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::web_authn::{
    AddVirtualAuthenticatorParams, AuthenticatorId, AuthenticatorProtocol, AuthenticatorTransport,
    EnableParams, SetAutomaticPresenceSimulationParams, SetUserVerifiedParams,
    VirtualAuthenticatorOptions,
};
use futures::StreamExt;

/// How long a phone waits for a page to say something.
pub const WAIT: Duration = Duration::from_secs(20);

/// A phone: Chromium with a platform authenticator that verifies its user.
pub struct Phone {
    chromium: Child,
    _profile: tempfile::TempDir,
    _browser: Browser,
    authenticator: AuthenticatorId,
    /// Its one page.
    pub page: Page,
}

impl Drop for Phone {
    fn drop(&mut self) {
        let _ = self.chromium.kill();
        let _ = self.chromium.wait();
    }
}

impl Phone {
    /// A phone.
    pub async fn start() -> Phone {
        Phone::start_with(&[]).await
    }

    /// A phone whose Chromium also takes `flags`.
    pub async fn start_with(flags: &[String]) -> Phone {
        let executable = clawdis_browser::discovery::find_executable(
            None,
            std::env::var("PATH").ok().as_deref(),
            None,
        )
        .expect("Chromium is installed (scripts/test installs it)");
        let profile = tempfile::tempdir().unwrap();
        let chromium = Command::new(executable)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .args(flags)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Chromium writes the port it chose, and the browser's path.
        let active = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + WAIT;
        let text = loop {
            if let Ok(text) = std::fs::read_to_string(&active)
                && text.lines().count() >= 2
            {
                break text;
            }
            assert!(Instant::now() < deadline, "Chromium never listened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let mut lines = text.lines();
        let (port, path) = (lines.next().unwrap(), lines.next().unwrap());
        let (browser, mut handler) = Browser::connect(format!("ws://127.0.0.1:{port}{path}"))
            .await
            .unwrap();
        tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser.new_page("about:blank").await.unwrap();
        page.execute(EnableParams::default()).await.unwrap();
        let mut options = VirtualAuthenticatorOptions::new(
            AuthenticatorProtocol::Ctap2,
            AuthenticatorTransport::Internal,
        );
        options.has_resident_key = Some(true);
        options.has_user_verification = Some(true);
        options.is_user_verified = Some(true);
        options.automatic_presence_simulation = Some(true);
        let authenticator = page
            .execute(AddVirtualAuthenticatorParams::new(options))
            .await
            .unwrap()
            .result
            .authenticator_id;
        Phone {
            chromium,
            _profile: profile,
            _browser: browser,
            authenticator,
            page,
        }
    }

    /// Whether its authenticator answers by itself (a person touching it at
    /// once); when not, a ceremony waits until it times out.
    pub async fn answers(&self, at_once: bool) {
        self.page
            .execute(SetAutomaticPresenceSimulationParams::new(
                self.authenticator.clone(),
                at_once,
            ))
            .await
            .unwrap();
    }

    /// Whether its authenticator verifies its user (else every ceremony,
    /// which requires that, fails).
    pub async fn verifies(&self, verified: bool) {
        self.page
            .execute(SetUserVerifiedParams::new(
                self.authenticator.clone(),
                verified,
            ))
            .await
            .unwrap();
    }

    /// Opens `url` and presses the button `css`; what the page then says.
    pub async fn press(&self, url: &str, css: &str) -> String {
        self.page.goto(url).await.unwrap();
        self.click(css, "").await
    }

    /// Resolves once the page's `check` expression holds, looked at on
    /// every change of the page.
    pub async fn until(&self, check: &str) {
        let script = format!(
            "new Promise((done) => {{ const check = () => ({check}) && done(true); \
             new MutationObserver(check).observe(document.body, {{childList: true, subtree: true, characterData: true, attributes: true}}); \
             check(); }})"
        );
        tokio::time::timeout(WAIT, self.page.evaluate(script))
            .await
            .unwrap_or_else(|_| panic!("the page never shows {check}"))
            .unwrap();
    }

    /// Presses the button `css` of the page as it is; what the page then
    /// says, once that holds `needle`.
    pub async fn click(&self, css: &str, needle: &str) -> String {
        self.page
            .find_element(css)
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let said = self.page.evaluate(format!(
            "new Promise((done) => {{ const said = document.getElementById('said'); \
             const check = () => said.textContent && said.textContent.includes({needle:?}) && done(said.textContent); \
             new MutationObserver(check).observe(said, {{childList: true, subtree: true, characterData: true}}); \
             check(); }})"
        ));
        tokio::time::timeout(WAIT, said)
            .await
            .unwrap_or_else(|_| panic!("the page says {needle:?}"))
            .unwrap()
            .into_value::<String>()
            .unwrap()
    }
}
