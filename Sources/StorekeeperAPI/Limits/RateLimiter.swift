import Foundation
import StorekeeperCore

/// Token-bucket limits per client address and per user (`RATE_LIMIT_PER_ADDRESS`,
/// `RATE_LIMIT_PER_USER`), and each user's proof budget in bytes (`PROOF_BYTES_PER_USER`).
/// Which routes take which bucket is `RateLimitRules`'s decision; this only keeps the buckets.
/// In memory, per instance: a client spread over N instances gets up to N times the rate, which
/// is the price of needing no shared store for it.
package final class RateLimiter: Sendable {
  let perAddress: BucketStore?
  let perUser: BucketStore?
  let proofBytesPerUser: BucketStore?
  let clientAddress: ClientAddress
  private let nowNs: @Sendable () -> UInt64

  /// What a post costs the proof budget at least, whatever its size, and what an exact repeat
  /// of one of the user's last posts costs: so the budget also bounds how many posts a user
  /// makes (a report row each), and a client's retries of one report stay cheap.
  static let minimumProofCost = 64_000

  package init(
    perAddress: RateSpec?, perUser: RateSpec?, proofBytesPerUser: RateSpec? = nil, maxKeys: Int,
    clientAddress: ClientAddress,
    nowNs: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
  ) {
    self.perAddress = perAddress.map { BucketStore(spec: $0, capacity: maxKeys) }
    self.perUser = perUser.map { BucketStore(spec: $0, capacity: maxKeys) }
    self.proofBytesPerUser = proofBytesPerUser.map { BucketStore(spec: $0, capacity: maxKeys) }
    self.clientAddress = clientAddress
    self.nowNs = nowNs
  }

  /// The address bucket's key: the address, or for IPv6 its /64 — one subscriber's usual
  /// allocation, so a client cannot dodge the limit by walking through its own prefix.
  static func addressKey(_ address: String) -> String {
    guard let bytes = IPNetwork.address(address), bytes.count == 16 else { return address }
    return bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
  }

  /// The one place a user id becomes a bucket key (the authenticated user, or the one a trusted
  /// caller names): byte for byte, so a look-alike id spends a bucket of its own.
  static func userKey(_ userId: String) -> String { UserId.key(userId) }

  func take(address: String) -> RateLimitDecision? {
    perAddress?.take(Self.addressKey(address), nowNs: nowNs())
  }

  func take(userId: String) -> RateLimitDecision? {
    perUser?.take(Self.userKey(userId), nowNs: nowNs())
  }

  /// Spends the user's proof budget on a post of `body`: its size, at least
  /// `minimumProofCost`; only that minimum for an exact repeat of one of the user's last posts.
  func takeProof(userId: String, body: [UInt8]) -> RateLimitDecision? {
    guard let proofBytesPerUser else { return nil }
    var hasher = Hasher()
    hasher.combine(body.count)
    body.withUnsafeBytes { hasher.combine(bytes: $0) }
    let minimum = Double(Self.minimumProofCost)
    return proofBytesPerUser.take(
      Self.userKey(userId), cost: max(Double(body.count), minimum), repeatCost: minimum,
      fingerprint: hasher.finalize(), nowNs: nowNs())
  }
}
