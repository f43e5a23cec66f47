//! The controller's kube clients: kube's own retries of 429/503/504 turned off
//! (throttling must stay visible), an optional client-go style token bucket
//! (QPS + burst) per client whose waits are measured — watches are never
//! throttled, as in client-go — request counting by code and method, and
//! client-go's request latency histogram, all as tower layers; HTTP/1.1 or,
//! with `--http2`, HTTP/2 negotiated by ALPN.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::Result;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::{Request, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ClientBuilder;
use tower::buffer::BufferLayer;
use tower::{BoxError, Layer, Service};

use crate::metrics::Metrics;

/// A token bucket with client-go's semantics: `qps` tokens per second, at most
/// `burst` stored, starting full.
pub fn token_bucket(qps: f64, burst: u32) -> DefaultDirectRateLimiter {
    let period = Duration::from_secs_f64(1.0 / qps);
    let quota = Quota::with_period(period)
        .expect("qps > 0")
        .allow_burst(std::num::NonZeroU32::new(burst.max(1)).expect("burst ≥ 1"));
    RateLimiter::direct(quota)
}

/// How the controller's kube clients are assembled (environment variable
/// `WIDGET_CLIENT_STACK`, for before/after measurements; `lean` unless set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// A custom stack built from kube's own pieces ([`kube::client::ConfigExt`]):
    /// base URI and auth layers over hyper's pooled HTTP/1 client with
    /// TCP_NODELAY (as Go's net/http sets it), our instrument layer directly
    /// on the (cloneable) hyper client, so the only queue a request crosses
    /// is the one `kube::Client::new` always adds.
    Lean,
    /// kube's default stack (`ClientBuilder::try_from`: tracing layer,
    /// timeout connector, Nagle on) with our layer behind a second
    /// `BufferLayer`, which the instrument layer needed to clone the boxed
    /// service: two task hops per request. What the controller did before.
    Default,
}

impl Stack {
    pub fn from_env() -> Stack {
        match std::env::var("WIDGET_CLIENT_STACK").as_deref() {
            Ok("default") => Stack::Default,
            _ => Stack::Lean,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stack::Lean => "lean",
            Stack::Default => "default",
        }
    }
}

/// Builds the instrumented client from a kube config.
pub async fn build(
    mut config: kube::Config,
    metrics: Arc<Metrics>,
    rate_limit: Option<(f64, u32)>,
    stack: Stack,
    http2: bool,
) -> Result<kube::Client> {
    config.default_retry = false;
    let host = config
        .cluster_url
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    metrics.touch_throttle(&host);
    let layer = InstrumentLayer {
        metrics,
        limiter: rate_limit.map(|(q, b)| Arc::new(token_bucket(q, b))),
        host,
    };
    match stack {
        Stack::Default => Ok(ClientBuilder::try_from(config)?
            .with_layer(&BufferLayer::new(1024))
            .with_layer(&layer)
            .build()),
        Stack::Lean => {
            use kube::client::ConfigExt;
            let mut http = HttpConnector::new();
            http.enforce_http(false);
            http.set_nodelay(true);
            http.set_connect_timeout(config.connect_timeout);
            // kube's connector offers only http/1.1; offering h2 first lets
            // the apiserver pick HTTP/2, as Go's client does.
            let mut tls = config.rustls_client_config()?;
            if http2 {
                tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            }
            let https = hyper_rustls::HttpsConnector::from((http, Arc::new(tls)));
            let hyper: hyper_util::client::legacy::Client<_, kube::client::Body> =
                hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(https);
            let service = tower::ServiceBuilder::new()
                .layer(config.base_uri_layer())
                .option_layer(config.auth_layer()?)
                .layer(config.extra_headers_layer()?)
                .map_err(BoxError::from)
                .layer(layer)
                .service(hyper);
            Ok(kube::Client::new(service, config.default_namespace))
        }
    }
}

#[derive(Clone)]
struct InstrumentLayer {
    metrics: Arc<Metrics>,
    limiter: Option<Arc<DefaultDirectRateLimiter>>,
    host: String,
}

impl<S> Layer<S> for InstrumentLayer {
    type Service = Instrument<S>;

    fn layer(&self, inner: S) -> Instrument<S> {
        Instrument {
            inner,
            layer: self.clone(),
        }
    }
}

#[derive(Clone)]
struct Instrument<S> {
    inner: S,
    layer: InstrumentLayer,
}

impl<S, B, R> Service<Request<B>> for Instrument<S>
where
    S: Service<Request<B>, Response = Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // Take the service that was polled ready; leave a clone for the next call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let l = self.layer.clone();
        Box::pin(async move {
            let method = req.method().as_str().to_string();
            // client-go never rate-limits a watch (Request.Watch skips the limiter).
            let watch = req
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"));
            if let Some(limiter) = l.limiter.as_ref().filter(|_| !watch) {
                let t = Instant::now();
                limiter.until_ready().await;
                l.metrics
                    .record_throttle(&method, &l.host, t.elapsed().as_secs_f64());
            }
            // The latency's clock starts once the bucket let the request
            // through, so it holds no throttle wait (client-go's starts
            // before its limiter and holds it).
            let t = Instant::now();
            let res = inner.call(req).await;
            // A watch's response is a stream: its time is not a latency.
            if !watch {
                l.metrics
                    .record_latency(&method, &l.host, t.elapsed().as_secs_f64());
            }
            let code = match &res {
                Ok(r) => r.status().as_u16().to_string(),
                Err(_) => "<error>".to_string(),
            };
            l.metrics.record_request(&code, &method, &l.host);
            res
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use http::{Request, Response};
    use tower::{Layer, Service, ServiceExt};

    use super::{InstrumentLayer, token_bucket};
    use crate::metrics::Metrics;

    /// With the bucket empty, a watch still goes out at once; a GET waits.
    #[tokio::test]
    async fn watches_are_never_throttled() {
        let (mock, mut handle) = tower_test::mock::pair::<Request<String>, Response<String>>();
        let layer = InstrumentLayer {
            metrics: Arc::new(Metrics::new(1)),
            // One token, then one every 1000 s.
            limiter: Some(Arc::new(token_bucket(0.001, 1))),
            host: "h".into(),
        };
        let mut svc = layer.layer(mock);
        tokio::spawn(async move {
            while let Some((_, send)) = handle.next_request().await {
                send.send_response(Response::new(String::new()));
            }
        });
        let get = |uri: &str| Request::get(uri).body(String::new()).unwrap();
        let first = svc.ready().await.unwrap().call(get("/api/x")).await;
        assert!(first.is_ok());
        let watch = svc.ready().await.unwrap().call(get(
            "/apis/g/v1/namespaces/n/widgets?watch=true&resourceVersion=1",
        ));
        assert!(
            tokio::time::timeout(Duration::from_secs(2), watch)
                .await
                .is_ok(),
            "a watch waited for the bucket"
        );
        let throttled = svc.ready().await.unwrap().call(get("/api/x"));
        assert!(
            tokio::time::timeout(Duration::from_millis(300), throttled)
                .await
                .is_err(),
            "a GET went out with the bucket empty"
        );
    }

    #[test]
    fn bucket_starts_full_and_refills_at_qps() {
        let b = token_bucket(5.0, 5);
        for _ in 0..5 {
            assert!(b.check().is_ok());
        }
        assert!(b.check().is_err());
    }
}
