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
//!
//! The script and the style sheet are named by their content's hash, so a browser keeps them
//! for a year (`immutable`); `index.html`, which names them, is revalidated every time. Every
//! text file is sent brotli- or gzip-compressed when the browser accepts it, from the twins the
//! build made (`build.rs` lists them), never compressed per request.

use axum::body::Body;
use axum::extract::Path;
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
    LOCATION, REFERRER_POLICY, VARY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
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

/// One file of the bundle, with the compressed twins the build made of it (`.br`, `.gz`).
struct Asset {
    /// Under `/dashboard/`.
    path: &'static str,
    bytes: &'static [u8],
    brotli: Option<&'static [u8]>,
    gzip: Option<&'static [u8]>,
}

/// The bundle, file by file, as `build.rs` found `dashboard/dist`: `index.html` and the icon
/// under fixed names, the script and the style sheet under `assets/` named by their content's
/// hash (`vite.config.ts`).
const ASSETS: &[Asset] = include!(concat!(env!("OUT_DIR"), "/dashboard_assets.rs"));

/// How long a browser keeps a file whose name is its content's hash: a year, never asking again
/// (a new build is a new name, which the new `index.html` names).
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `index.html` (and the icon): asked again every time, so a new build is seen at once.
const REVALIDATE: &str = "no-cache";

fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}

fn index_asset() -> &'static Asset {
    asset("index.html").expect("dashboard/dist holds index.html")
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        _ => "application/octet-stream",
    }
}

/// The encodings a request's `Accept-Encoding` allows, by name (a `q=0` refuses one).
fn accepts(headers: &HeaderMap, encoding: &str) -> bool {
    headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|param| {
                param
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case(encoding) || name == "*") && !refused
        })
}

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

async fn index(headers: HeaderMap) -> Response {
    serve_asset(index_asset(), &headers)
}

async fn file(Path(path): Path<String>, headers: HeaderMap) -> Response {
    if let Some(asset) = asset(&path).filter(|asset| asset.path != "index.html") {
        return serve_asset(asset, &headers);
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    if last.contains('.') {
        return secured(ApiError::new(ResponseCode::UnknownOperation).into_response());
    }
    index(headers).await
}

async fn method_not_allowed() -> Response {
    secured(ApiError::new(ResponseCode::MethodNotAllowed).into_response())
}

/// `asset`, compressed as the request allows (brotli, else gzip, else as it is), and cached by
/// the browser for a year when its name is its content's hash, revalidated otherwise.
fn serve_asset(asset: &'static Asset, request: &HeaderMap) -> Response {
    let (bytes, encoding) = match (asset.brotli, asset.gzip) {
        (Some(brotli), _) if accepts(request, "br") => (brotli, Some("br")),
        (_, Some(gzip)) if accepts(request, "gzip") => (gzip, Some("gzip")),
        _ => (asset.bytes, None),
    };
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(content_type(asset.path)),
    );
    let cache = if asset.path.starts_with("assets/") {
        IMMUTABLE
    } else {
        REVALIDATE
    };
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Some(encoding) = encoding {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    if asset.brotli.is_some() || asset.gzip.is_some() {
        headers.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
    }
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
        get_with(path, None).await
    }

    async fn get_with(path: &str, accept_encoding: Option<&str>) -> Response {
        let mut request = Request::builder().method(Method::GET).uri(path);
        if let Some(encodings) = accept_encoding {
            request = request.header("accept-encoding", encodings);
        }
        let request = request.body(Body::empty()).expect("a request");
        routes().oneshot(request).await.expect("infallible")
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

    /// The script `index.html` names (`/dashboard/assets/dashboard-<hash>.js`).
    fn script_path() -> String {
        let html = std::str::from_utf8(index_asset().bytes).expect("UTF-8");
        let start = html
            .find("/dashboard/assets/")
            .expect("index.html names its script");
        let end = html[start..].find('"').expect("a quoted path") + start;
        html[start..end].to_owned()
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
        assert_eq!(header(&response, "cache-control"), "no-cache");
        let html = String::from_utf8(body(response).await).expect("UTF-8");
        assert!(html.contains("/dashboard/assets/dashboard-"), "{html}");
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
            "/dashboard/transfers/TRF-20261102-8H4M2P",
            "/dashboard/accounts/1000000014",
            "/dashboard/accept-invite?token=inv_x",
        ] {
            let response = get(path).await;
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_secured(&response);
            assert_eq!(body(response).await, index_asset().bytes, "{path}");
        }
    }

    #[tokio::test]
    async fn files_have_their_content_types_and_a_missing_one_is_unknown() {
        let script = get(&script_path()).await;
        assert_eq!(script.status(), StatusCode::OK);
        assert_eq!(
            header(&script, "content-type"),
            "text/javascript; charset=utf-8"
        );
        assert_secured(&script);
        let style = ASSETS
            .iter()
            .find(|asset| asset.path.ends_with(".css"))
            .expect("a style sheet");
        let style = get(&format!("/dashboard/{}", style.path)).await;
        assert_eq!(header(&style, "content-type"), "text/css; charset=utf-8");
        let missing = get("/dashboard/assets/other.js").await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_secured(&missing);
        let posted = request(Method::POST, "/dashboard/").await;
        assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    /// Defect 16 of issue 59: the assets went uncompressed, with `no-cache`.
    #[tokio::test]
    async fn hashed_assets_are_cached_for_a_year_and_sent_compressed() {
        let path = script_path();
        let plain = get(&path).await;
        assert_eq!(header(&plain, "cache-control"), IMMUTABLE);
        assert_eq!(header(&plain, "vary"), "Accept-Encoding");
        assert_eq!(header(&plain, "content-encoding"), "");
        let plain = body(plain).await;

        let brotli = get_with(&path, Some("gzip, deflate, br, zstd")).await;
        assert_eq!(header(&brotli, "content-encoding"), "br");
        assert_eq!(header(&brotli, "cache-control"), IMMUTABLE);
        let brotli = body(brotli).await;
        assert!(
            brotli.len() * 3 < plain.len(),
            "{} of {}",
            brotli.len(),
            plain.len()
        );

        let gzip = get_with(&path, Some("gzip")).await;
        assert_eq!(header(&gzip, "content-encoding"), "gzip");
        let gzip = body(gzip).await;
        assert_eq!(&gzip[..2], &[0x1f, 0x8b], "a gzip stream");
        assert!(
            gzip.len() * 3 < plain.len(),
            "{} of {}",
            gzip.len(),
            plain.len()
        );

        let refused = get_with(&path, Some("br;q=0, gzip;q=0")).await;
        assert_eq!(header(&refused, "content-encoding"), "");
        assert_eq!(body(refused).await, plain);

        let index = get_with("/dashboard/", Some("br")).await;
        assert_eq!(header(&index, "content-encoding"), "br");
        assert_eq!(header(&index, "cache-control"), "no-cache");
    }

    /// Every script and style sheet of the bundle is named by its content's hash, has its
    /// compressed twins, and is named by `index.html`.
    #[test]
    fn the_bundle_is_hashed_compressed_and_complete() {
        let html = std::str::from_utf8(index_asset().bytes).expect("UTF-8");
        let code: Vec<_> = ASSETS
            .iter()
            .filter(|asset| asset.path.ends_with(".js") || asset.path.ends_with(".css"))
            .collect();
        assert_eq!(code.len(), 2, "one script and one style sheet");
        for asset in code {
            assert!(
                asset.path.starts_with("assets/dashboard-"),
                "{}",
                asset.path
            );
            assert!(
                asset.brotli.is_some() && asset.gzip.is_some(),
                "{}",
                asset.path
            );
            assert!(
                html.contains(&format!("/dashboard/{}", asset.path)),
                "index.html names {}",
                asset.path
            );
        }
    }

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
            headers
        };
        assert!(accepts(&with("gzip, br"), "br"));
        assert!(accepts(&with("BR;q=0.5"), "br"));
        assert!(!accepts(&with("gzip"), "br"));
        assert!(!accepts(&with("br;q=0"), "br"));
        assert!(accepts(&with("*"), "gzip"));
        assert!(!accepts(&HeaderMap::new(), "gzip"));
    }
}
