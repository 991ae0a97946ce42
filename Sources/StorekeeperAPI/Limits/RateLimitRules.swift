import HTTP
import StorekeeperCore

/// Which routes are limited, and how: decided here, once, for every route the router knows.
/// App and admin routes count per client address (catalog reads too — one generous bucket per
/// address, sized for many users behind one NAT); creating orders, posting receipts, and
/// spending and granting balances also count per user (an exact replay of a spend or grant
/// already made is answered even past that limit: `APIRouter.limited`). Posts that carry a proof (reports, receipts) also spend the user's proof
/// budget, in bytes, which bounds what one user can make the database store (issue 22).
/// Signing a promotional offer (one ECDSA signature, no database) counts per address only,
/// like reads. Health, readiness and the contract are for operators and probes, and the stores'
/// notifications are not limited either: Apple's come in bursts from Apple's own addresses and
/// are checked by signature; Google's Pub/Sub pushes come in bursts from Google's shared
/// addresses and are checked by their OIDC token before the body is read, and a 429 only makes
/// Pub/Sub redeliver later, delaying refunds and renewals. `/metrics` is limited: it takes
/// every admin token, and the admin failure limit never refuses a right one, so only the
/// address's bucket bounds how fast tokens are guessed there (a scrape every few seconds is
/// far below it). Proofs cost more than a token: their verification has its own concurrency
/// cap (`VerificationGate`).
enum RateLimitRules {
  static let operatorPaths: Set<String> = ["/healthz", "/readyz", "/openapi.yaml"]
  /// Google's push endpoint (Apple's routes are all under `/v1/apple/`).
  static let storePaths: Set<String> = ["/v1/google/notifications"]

  static func scope(_ method: HTTPMethod, _ pattern: String) -> RateLimitScope {
    if operatorPaths.contains(pattern) || storePaths.contains(pattern)
      || pattern.hasPrefix("/v1/apple/")
    {
      return .none
    }
    guard method == .post else { return .address }
    switch pattern {
    case "/v1/orders": return .addressAndUser
    case "/v1/receipts", "/v1/receipts.xml": return .addressUserAndProofs
    case "/v1/trade-reports": return .addressAndProofs
    case "/v1/users/{user_id}/balances/{currency}/spend",
      "/v1/users/{user_id}/balances/{currency}/grant":
      return .addressAndUser
    default: return .address
    }
  }
}
