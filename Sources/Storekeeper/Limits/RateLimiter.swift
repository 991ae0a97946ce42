import Foundation

/// Token-bucket limits per client address and per user (`RATE_LIMIT_PER_ADDRESS`,
/// `RATE_LIMIT_PER_USER`). Which routes take which bucket is `RateLimitRules`'s decision; this
/// only keeps the buckets. In memory, per instance: a client spread over N instances gets up to
/// N times the rate, which is the price of needing no shared store for it.
final class RateLimiter: Sendable {
  let perAddress: BucketStore?
  let perUser: BucketStore?
  let clientAddress: ClientAddress
  private let nowNs: @Sendable () -> UInt64

  init(
    perAddress: RateSpec?, perUser: RateSpec?, maxKeys: Int, clientAddress: ClientAddress,
    nowNs: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
  ) {
    self.perAddress = perAddress.map { BucketStore(spec: $0, capacity: maxKeys) }
    self.perUser = perUser.map { BucketStore(spec: $0, capacity: maxKeys) }
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
}
