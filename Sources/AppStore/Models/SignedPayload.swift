/// A payload Apple signs; its `signedDate` is the moment the certificate chain must be valid at.
protocol SignedPayload: Decodable, Sendable {
  var signedDate: Int64? { get }
}
