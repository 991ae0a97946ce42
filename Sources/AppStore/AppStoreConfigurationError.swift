/// A configuration mistake found at start-up; the server must not start with it.
public enum AppStoreConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The PEM text at this index of `extraRootCertificatesPEM` holds no readable certificate.
  case invalidRootCertificate(index: Int)
  case trustStoreUnavailable

  public var description: String {
    switch self {
    case .invalidRootCertificate(let index):
      "extra root certificate #\(index + 1) is not a readable PEM certificate"
    case .trustStoreUnavailable: "could not create the OpenSSL trust store"
    }
  }
}
