import Foundation
import StorekeeperLogging

extension FakeGooglePlayServer {
  /// How the fake Google Play runs.
  public struct Configuration: Sendable {
    /// Loopback only: the fake's key file and tokens must never face a network.
    public var host = "127.0.0.1"
    /// 0 picks a free port.
    public var port = 0
    /// The app whose purchases the control endpoints make unless told another.
    public var packageName = "com.example.storekeeper"
    /// The service account the key file names.
    public var clientEmail = "storekeeper@fake-project.iam.gserviceaccount.com"
    /// Where RTDN pushes go; none are sent without one.
    public var pushURL: URL?
    /// `aud` of the push tokens; Pub/Sub's default is the push URL.
    public var pushAudience: String?
    /// `email` of the push tokens: the push subscription's service account.
    public var pushEmail = "pubsub-push@fake-project.iam.gserviceaccount.com"
    public var pushSubscription = "projects/fake-project/subscriptions/storekeeper-rtdn"
    /// Pub/Sub's default retry policy: 10 s doubling to 600 s, for 7 days. Tests shorten them.
    public var pushMinBackoff: Duration = .seconds(10)
    public var pushMaxBackoff: Duration = .seconds(600)
    public var pushRetention: Duration = .seconds(7 * 86_400)
    /// `maxResults` of the voided purchases list when the request names none.
    public var voidedPageSize = 1000
    /// Access tokens live an hour, as Google's do.
    public var accessTokenSeconds: Int64 = 3599
    public var eventLoopCount = 1
    public var shutdownGracePeriod: Duration = .seconds(2)
    public var logger = Logger(label: "fake-googleplay")

    public init() {}
  }
}
