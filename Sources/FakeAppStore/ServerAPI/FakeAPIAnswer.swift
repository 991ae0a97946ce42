import HTTP

/// An App Store Server API answer other than the transaction asked for.
struct FakeAPIAnswer: Error {
  var response: Response
  init(_ response: Response) { self.response = response }
}
