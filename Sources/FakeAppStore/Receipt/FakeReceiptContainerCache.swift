import Foundation
import Synchronization

/// Each account receipt's PKCS#7 container, signed once per content: ECDSA signatures differ
/// every time, and a device holds the same receipt bytes until a transaction changes it.
final class FakeReceiptContainerCache: Sendable {
  private let signed = Mutex<[String: (payload: [UInt8], base64: String)]>([:])

  func base64(
    _ receipt: FakeReceipt, transactions: [FakeTransaction], authority: FakeCertificateAuthority
  ) throws -> String {
    let payload = FakeAppReceiptContainer.payload(receipt, transactions: transactions)
    if let cached = signed.withLock({ $0[receipt.id] }), cached.payload == payload {
      return cached.base64
    }
    let base64 = Data(try authority.signPKCS7(payload)).base64EncodedString()
    return signed.withLock { cache in
      // Two requests may sign the same content at once: the first stored wins for both.
      if let cached = cache[receipt.id], cached.payload == payload { return cached.base64 }
      cache[receipt.id] = (payload, base64)
      return base64
    }
  }
}
