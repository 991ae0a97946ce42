import HTTP
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct RequestMetricsTests {
  @Test func countsByStatusClassWithCumulativeLatencyBuckets() {
    let metrics = RequestMetrics()
    metrics.requestCompleted(method: .get, status: 200, nanoseconds: 500_000)
    metrics.requestCompleted(method: .post, status: 201, nanoseconds: 20_000_000)
    metrics.requestCompleted(method: .get, status: 404, nanoseconds: 3_000_000_000)
    metrics.requestCompleted(method: .get, status: 503, nanoseconds: 60_000_000_000)
    let lines = Set(metrics.render())
    #expect(lines.contains(#"storekeeper_http_requests_total{class="2xx"} 2"#))
    #expect(lines.contains(#"storekeeper_http_requests_total{class="4xx"} 1"#))
    #expect(lines.contains(#"storekeeper_http_requests_total{class="5xx"} 1"#))
    #expect(lines.contains(#"storekeeper_http_request_duration_seconds_bucket{le="0.001"} 1"#))
    #expect(lines.contains(#"storekeeper_http_request_duration_seconds_bucket{le="0.025"} 2"#))
    #expect(lines.contains(#"storekeeper_http_request_duration_seconds_bucket{le="2.5"} 2"#))
    #expect(lines.contains(#"storekeeper_http_request_duration_seconds_bucket{le="10"} 3"#))
    #expect(lines.contains(#"storekeeper_http_request_duration_seconds_bucket{le="+Inf"} 4"#))
    #expect(lines.contains("storekeeper_http_request_duration_seconds_count 4"))
    #expect(lines.contains("storekeeper_http_request_duration_seconds_sum 63.0205"))
  }
}
