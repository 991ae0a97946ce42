/// Fetches the JWKS document's bytes; a seam so tests can serve their own.
public protocol JWKSFetching: Sendable {
  func fetch() async throws -> [UInt8]
}

/// Why a fetch produced no document.
public struct JWKSFetchError: Error, CustomStringConvertible, Sendable {
  public var description: String
  public init(_ description: String) { self.description = description }
}
