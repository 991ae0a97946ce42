import Foundation
import JOSE
import Synchronization

/// Everything the fake Google Play remembers, in memory, under one lock held for map updates
/// and never across I/O: purchases, voided purchases, issued access tokens, faults, and the
/// purchase clock tests move.
final class FakePlayState: Sendable {
  struct Contents: Sendable {
    var products: [String: FakeProduct] = [:]
    var subscriptions: [String: FakeSubscription] = [:]
    var voided: [FakeVoided] = []
    /// Every order charged, by order id (`orders.get`).
    var orders: [String: FakeOrder] = [:]
    /// Access token → when it expires, in real seconds (tokens follow the real clock, as
    /// the client's assertions do).
    var accessTokens: [String: Int64] = [:]
    var faults: [FakeFault] = []
    /// Added to the real time for everything purchases see (the three days, renewals).
    var clockOffsetMillis: Int64 = 0
    var orderCounter = 0
  }

  let contents = Mutex(Contents())

  init() {}

  /// Milliseconds since 1970 on the purchase clock.
  func nowMillis() -> Int64 {
    Self.realMillis() + contents.withLock { $0.clockOffsetMillis }
  }

  static func realMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

  static func realSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }

  /// A purchase token: opaque, URL-safe, about as long as Google's.
  static func newToken() -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<48).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return "fake." + Base64URL.encode(bytes)
  }

  /// `GPA.dddd-dddd-dddd-ddddd`, Google's order id shape.
  func newOrderId() -> String {
    let n = contents.withLock { contents -> Int in
      contents.orderCounter += 1
      return contents.orderCounter
    }
    let digits = String(33_000_000_000_000_000 as Int64 + Int64(n))
    let chars = Array(digits)
    return "GPA.\(String(chars[0..<4]))-\(String(chars[4..<8]))-\(String(chars[8..<12]))-"
      + String(chars[12..<17])
  }

  /// The fault this request gets, counting it down.
  func takeFault(_ target: FakeFault.Target) -> FakeFault? {
    contents.withLock { contents in
      guard let index = contents.faults.firstIndex(where: { $0.target == target }) else {
        return nil
      }
      let fault = contents.faults[index]
      if let remaining = fault.remaining {
        if remaining <= 1 {
          contents.faults.remove(at: index)
        } else {
          contents.faults[index].remaining = remaining - 1
        }
      }
      return fault
    }
  }
}
