//! The Dashboard: the single-page app of `dashboard/` (its README says how it is built), served
//! at `/dashboard/` from the bundle `dashboard/dist`, which is committed like generated code and
//! embedded in the binary here, so `kobo serve` needs nothing else and `cargo build` needs no
//! node.
//!
//! Every answer carries a strict Content-Security-Policy (scripts, styles and calls from this
//! origin only, no inline script, no framing), `nosniff` and `no-referrer` (an invitation link
//! holds its token in the query string). Paths that name no file are the app's own routes
//! (`/dashboard/transfers`, `/dashboard/accept-invite?token=...`): they get `index.html`, and
//! the app draws the page. A missing file (a path with an extension) is `04` like any unknown
//! path, so a stale bundle shows as an error, not as a page.

use axum::body::Body;
use axum::extract::Path;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use generated_server::{ApiError, ResponseCode};

/// Where the Dashboard is served; its bundle is built with this base (`dashboard/vite.config.ts`).
pub const DASHBOARD_PATH: &str = "/dashboard/";

/// What the Dashboard's pages may load: everything from this origin, nothing inline, no frame
/// around them.
const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One file of the bundle.
struct Asset {
    /// Under `/dashboard/`.
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// The bundle, file by file (`vite.config.ts` gives them fixed names; a test checks that every
/// file of `dashboard/dist` is here).
const ASSETS: &[Asset] = &[
    Asset {
        path: "index.html",
        content_type: "text/html; charset=utf-8",
        bytes: include_bytes!("../../../dashboard/dist/index.html"),
    },
    Asset {
        path: "assets/dashboard.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../dashboard/dist/assets/dashboard.js"),
    },
    Asset {
        path: "assets/dashboard.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../../dashboard/dist/assets/dashboard.css"),
    },
    Asset {
        path: "favicon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../../../dashboard/dist/favicon.svg"),
    },
];

/// `/dashboard` (redirected to `/dashboard/`), `/dashboard/` and everything under it; GET and
/// HEAD, any other method `05` as elsewhere.
pub(crate) fn routes() -> Router {
    Router::new()
        .route("/dashboard", get(redirect))
        .route("/dashboard/", get(index))
        .route("/dashboard/{*path}", get(file))
        .method_not_allowed_fallback(method_not_allowed)
}

async fn redirect() -> Response {
    let mut response = secured(Response::new(Body::empty()));
    *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
    response
        .headers_mut()
        .insert(LOCATION, HeaderValue::from_static(DASHBOARD_PATH));
    response
}

async fn index() -> Response {
    serve_asset(&ASSETS[0])
}

async fn file(Path(path): Path<String>) -> Response {
    if let Some(asset) = ASSETS.iter().find(|asset| asset.path == path) {
        return serve_asset(asset);
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    if last.contains('.') {
        return secured(ApiError::new(ResponseCode::UnknownOperation).into_response());
    }
    index().await
}

async fn method_not_allowed() -> Response {
    secured(ApiError::new(ResponseCode::MethodNotAllowed).into_response())
}

fn serve_asset(asset: &Asset) -> Response {
    let mut response = Response::new(Body::from(asset.bytes));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    // The files keep their names from one build to the next: always revalidate.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    secured(response)
}

fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{Method, Request};
    use tower::ServiceExt;

    async fn get(path: &str) -> Response {
        request(Method::GET, path).await
    }

    async fn request(method: Method, path: &str) -> Response {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .expect("a request");
        routes().oneshot(request).await.expect("infallible")
    }

    fn header<'a>(response: &'a Response, name: &str) -> &'a str {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }

    async fn body(response: Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body")
            .to_vec()
    }

    fn assert_secured(response: &Response) {
        let policy = header(response, "content-security-policy");
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(policy.contains("script-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert_eq!(header(response, "x-content-type-options"), "nosniff");
        assert_eq!(header(response, "referrer-policy"), "no-referrer");
    }

    #[tokio::test]
    async fn the_index_is_served_with_its_security_headers() {
        let response = get("/dashboard/").await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_secured(&response);
        assert_eq!(
            header(&response, "content-type"),
            "text/html; charset=utf-8"
        );
        let html = String::from_utf8(body(response).await).expect("UTF-8");
        assert!(html.contains("/dashboard/assets/dashboard.js"), "{html}");
        assert!(!html.contains("<script>"), "no inline script: {html}");
    }

    #[tokio::test]
    async fn dashboard_without_its_slash_is_redirected() {
        let response = get("/dashboard").await;
        assert_eq!(response.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(header(&response, "location"), "/dashboard/");
    }

    #[tokio::test]
    async fn the_apps_own_routes_get_the_index() {
        for path in [
            "/dashboard/transfers",
            "/dashboard/accounts/1000000014",
            "/dashboard/accept-invite?token=inv_x",
        ] {
            let response = get(path).await;
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_secured(&response);
            assert_eq!(body(response).await, ASSETS[0].bytes, "{path}");
        }
    }

    #[tokio::test]
    async fn files_have_their_content_types_and_a_missing_one_is_unknown() {
        let script = get("/dashboard/assets/dashboard.js").await;
        assert_eq!(
            header(&script, "content-type"),
            "text/javascript; charset=utf-8"
        );
        assert_secured(&script);
        let style = get("/dashboard/assets/dashboard.css").await;
        assert_eq!(header(&style, "content-type"), "text/css; charset=utf-8");
        let missing = get("/dashboard/assets/other.js").await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_secured(&missing);
        let posted = request(Method::POST, "/dashboard/").await;
        assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    /// The bundle and the list above agree: a file the build adds must be embedded here.
    #[test]
    fn every_file_of_the_bundle_is_embedded() {
        let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dashboard/dist");
        let mut files = Vec::new();
        let mut folders = vec![dist.clone()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("dashboard/dist") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    folders.push(path);
                } else {
                    let relative = path.strip_prefix(&dist).expect("under dist");
                    files.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        files.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        embedded.sort();
        assert_eq!(files, embedded, "dashboard/dist and ASSETS differ");
    }
}
