import Foundation
import StorekeeperLogging

extension FakeAppStoreServer {
  /// How the fake App Store runs.
  public struct Configuration: Sendable {
    /// Address to bind; loopback by default (the fake must never face a network).
    public var host = "127.0.0.1"
    /// 0 picks a free port; `start()` returns the one bound.
    public var port = 0
    /// Where notifications are POSTed unless a request names another URL.
    public var notifyURL: URL?
    /// Delays between attempts to deliver a production notification the receiver did not
    /// accept; Apple's: 1, 12, 24, 48 and 72 hours. Tests shorten them.
    public var retrySchedule: [Duration] = [1, 12, 24, 48, 72].map { .seconds($0 * 3600) }
    /// The in-app purchase key's id and issuer that API tokens must name.
    public var apiKeyId = "FAKEKEY001"
    public var apiIssuerId = "57246542-96fe-1a63-e053-0824d011072a"
    /// Notifications per page of the notification history (Apple does not say; tests
    /// shorten it to see pagination).
    public var historyPageSize = 20
    /// Transactions per page of Get Transaction History (Apple's: 20); `POST
    /// /fake/v1/server-api` changes it while the fake runs.
    public var transactionHistoryPageSize = 20
    /// `data.appAppleId` in Production notifications and `adam_id` in Production receipts.
    public var appAppleId: Int64 = 1_234_567_890
    /// When set, verifyReceipt answers 21004 to a different `password` (and to none at all
    /// for receipts with auto-renewable subscriptions, as Apple does).
    public var sharedSecret: String?
    /// How the test chain looks; the defaults mimic Apple's.
    public var certificateOptions = FakeCertificateAuthority.Options()
    public var eventLoopCount = 1
    /// How long shutdown waits for answers under way: held "timeout" answers are released at
    /// shutdown and nothing else runs long, so 2 s, unless a test on a loaded machine needs more.
    public var shutdownGracePeriod: Duration = .seconds(2)
    public var logger = Logger(label: "fake-appstore")

    public init() {}
  }
}
