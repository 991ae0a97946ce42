/// An OpenSSL call failed while the fake App Store made keys, certificates or signatures.
public struct FakeCryptoError: Error, Sendable, CustomStringConvertible {
  public var operation: String
  public var description: String { "fake App Store crypto failed: \(operation)" }

  init(_ operation: String) {
    self.operation = operation
  }
}
