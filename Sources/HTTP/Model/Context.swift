import StorekeeperLogging

/// What a handler gets besides the request.
public struct Context: Sendable {
  public var requestId: String
  /// Path parameters, percent-decoded, by the names in the route pattern.
  public var parameters: PathParameters
  public var remoteAddress: String
  /// The pattern of the route that matched (`/v1/orders/{trade_no}`): what may be logged and
  /// keyed on, unlike the path, whose parameters can be credentials.
  public var route = ""
  private var baseLogger: Logger

  public init(
    requestId: String, parameters: PathParameters = [:], logger: Logger,
    remoteAddress: String = "test"
  ) {
    self.requestId = requestId
    self.parameters = parameters
    self.baseLogger = logger
    self.remoteAddress = remoteAddress
  }

  /// A logger that adds `request_id` to every line. Built on use, so requests whose handlers
  /// never log do not pay for the metadata copy.
  public var logger: Logger {
    get { baseLogger.with("request_id", requestId) }
    set { baseLogger = newValue }
  }
}
