import Foundation
import Synchronization

/// What every App Store Server API client shares about Apple's 429s: per endpoint (base URL,
/// method and path with its ids left out, since Apple limits each endpoint per app), the
/// instant before which Apple said not to ask again. A request to a blocked endpoint waits
/// for it when that is near (`maximumWait`), else is not sent at all and fails as
/// `rateLimited` with the instant, so a caller that keeps work durably schedules it then.
/// One instance per process (`shared`), so a lookup, a reconcile pass and a worker all obey
/// the same answer.
package final class AppleRateLimits: Sendable {
  package static let shared = AppleRateLimits()

  /// The longest one request waits for Apple's instant before giving up for now.
  package let maximumWait: Duration
  /// Apple's instant is believed at most this far ahead (a wrong clock or header must not
  /// stop the calls for days).
  package let longestBlock: TimeInterval
  /// Without a usable `Retry-After`, the endpoint rests this long.
  package let defaultBlock: TimeInterval
  private let until = Mutex<[String: Date]>([:])

  package init(
    maximumWait: Duration = .seconds(5), longestBlock: TimeInterval = 3600,
    defaultBlock: TimeInterval = 1
  ) {
    self.maximumWait = maximumWait
    self.longestBlock = longestBlock
    self.defaultBlock = defaultBlock
  }

  /// The endpoint a request is counted against: its ids (digits, UUIDs) become `{}`.
  package static func endpoint(method: String, baseURL: URL, path: String) -> String {
    let template = path.split(separator: "/").map { segment in
      segment.contains(where: \.isNumber) && segment.count >= 8 ? "{}" : String(segment)
    }.joined(separator: "/")
    return method + " " + baseURL.absoluteString + " " + template
  }

  /// When the endpoint may be asked again; nil when it may be now.
  package func blockedUntil(_ endpoint: String, now: Date) -> Date? {
    until.withLock { until in
      guard let instant = until[endpoint] else { return nil }
      if instant <= now {
        until[endpoint] = nil
        return nil
      }
      return instant
    }
  }

  /// Records Apple's 429 and returns the instant it set, bounded.
  @discardableResult
  package func block(_ endpoint: String, retryAfter: String?, now: Date) -> Date {
    let asked =
      AppleRetryAfter.instant(retryAfter, now: now) ?? now.addingTimeInterval(defaultBlock)
    let instant = min(max(asked, now), now.addingTimeInterval(longestBlock))
    until.withLock { until in
      until[endpoint] = max(until[endpoint] ?? instant, instant)
    }
    return instant
  }
}
