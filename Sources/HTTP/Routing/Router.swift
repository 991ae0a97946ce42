import StorekeeperLogging

public typealias Handler = @Sendable (Request, Context) async throws -> Response
public typealias ImmediateHandler = @Sendable (Request, Context) throws -> Response
public typealias DeferrableHandler = @Sendable (Request, Context) throws -> ImmediateOutcome

/// What a route runs: an async handler placed as asked, an immediate one on the event-loop
/// thread (only for work that never blocks, such as returning pre-encoded bytes), or an
/// immediate one that may hand the rest of the request to an async handler placed as asked.
enum RouteHandler: Sendable {
  case async(Handler, HandlerPlacement)
  case immediate(ImmediateHandler)
  case deferrable(DeferrableHandler, HandlerPlacement)
}

/// Maps method and path to handlers. Static paths are a dictionary lookup; patterned paths are
/// tried in registration order.
public struct Router: Sendable {
  enum Resolution {
    case found(RouteHandler, parameters: PathParameters, route: String)
    case notFound
    case methodNotAllowed(allow: String)
  }

  /// Static paths by their length in bytes, each slot holding the few of that length: a
  /// lookup compares the path with those (usually one or none) instead of hashing it, and a
  /// patterned path (every offering request) is told apart from the static ones without
  /// probing a hash table, where each occupied bucket on the way cost a string comparison.
  private var staticRoutes: [[(path: String, methods: MethodTable)]] = []
  private var patternRoutes: [(pattern: RoutePattern, methods: MethodTable)] = []
  private var registered: [(method: HTTPMethod, pattern: String)] = []
  /// Used by `handle` to log unexpected errors; the server passes its own logger instead.
  public var logger = Logger(label: "http")

  public init() {}

  /// Every registered (method, pattern), in registration order.
  public var routes: [(method: HTTPMethod, pattern: String)] { registered }

  public mutating func add(
    _ method: HTTPMethod, _ pattern: String, placement: HandlerPlacement = .taskPool,
    _ handler: @escaping Handler
  ) {
    insert(method, pattern, .async(handler, placement))
  }

  public mutating func addImmediate(
    _ method: HTTPMethod, _ pattern: String, _ handler: @escaping ImmediateHandler
  ) {
    insert(method, pattern, .immediate(handler))
  }

  /// `placement` is where the async rest runs when the handler answers `.later`.
  public mutating func addDeferrable(
    _ method: HTTPMethod, _ pattern: String, placement: HandlerPlacement = .taskPool,
    _ handler: @escaping DeferrableHandler
  ) {
    insert(method, pattern, .deferrable(handler, placement))
  }

  private mutating func insert(_ method: HTTPMethod, _ text: String, _ handler: RouteHandler) {
    registered.append((method, text))
    let pattern = RoutePattern(text)
    if pattern.isStatic {
      let length = text.utf8.count
      if staticRoutes.count <= length {
        staticRoutes.append(contentsOf: repeatElement([], count: length + 1 - staticRoutes.count))
      }
      if let i = staticRoutes[length].firstIndex(where: { $0.path == text }) {
        staticRoutes[length][i].methods[method] = handler
      } else {
        var methods = MethodTable()
        methods[method] = handler
        staticRoutes[length].append((text, methods))
      }
    } else if let i = patternRoutes.firstIndex(where: { $0.pattern.segments == pattern.segments }) {
      patternRoutes[i].methods[method] = handler
    } else {
      var methods = MethodTable()
      methods[method] = handler
      patternRoutes.append((pattern, methods))
    }
  }

  /// HEAD falls back to GET (the server drops the body); on a path that exists, any other
  /// method without a handler — standard (TRACE, CONNECT) or made up — gives 405 with `Allow`.
  /// `target` is the raw request-target: patterns match its still percent-encoded path
  /// segment by segment (so an encoded `/` inside a parameter does not split it), worked out
  /// only when no static route matched. A route's literal words match only as spelled, never
  /// percent-encoded, so `/admin%2Fv1%2Fwhoami` and `/%61dmin/v1/whoami` are no admin route,
  /// as a proxy filtering on `/admin/` also judges them; only parameters are decoded.
  func resolve(_ method: HTTPMethod, path: String, target: String) -> Resolution {
    if let methods = staticMethods(path), !Self.hasEscape(path: path, target: target) {
      return pick(method, methods, parameters: [:], route: path)
    }
    if !patternRoutes.isEmpty {
      // Each segment decoded once, not once per route tried; one that does not decode
      // matches no pattern.
      guard let split = target.withUTF8Bytes({ Self.decodedSegments($0) }) else {
        return .notFound
      }
      let segments = split.segments
      for route in patternRoutes where route.pattern.segments.count == segments.count {
        if let parameters = route.pattern.match(segments, escaped: split.escaped) {
          return pick(method, route.methods, parameters: parameters, route: route.pattern.text)
        }
      }
    }
    return .notFound
  }

  private func staticMethods(_ path: String) -> MethodTable? {
    let length = path.utf8.count
    guard length < staticRoutes.count else { return nil }
    return staticRoutes.withUnsafeBufferPointer { slots in
      slots[length].withUnsafeBufferPointer { routes in
        for i in routes.indices where routes[i].path == path { return routes[i].methods }
        return nil
      }
    }
  }

  /// Whether the raw path holds a percent escape: a static route is all literal words, which
  /// match only as spelled. Decoding shortens a target, and so does a query, so a decoded path
  /// as long as its target (every catalog read) is known to have none without looking.
  static func hasEscape(path: String, target: String) -> Bool {
    guard path.utf8.count != target.utf8.count else { return false }
    return target.withUTF8Bytes { bytes in
      guard let raw = RequestTarget.rawPathRange(bytes) else { return false }
      return bytes[raw].contains(UInt8(ascii: "%"))
    }
  }

  /// The raw path's segments after its leading `/`, split on the byte (a `split` on
  /// `Character` walks grapheme boundaries) and percent-decoded, with `escaped`'s bit i set
  /// when segment i held an escape (from the 64th on, the last bit stands for all); nil if one
  /// does not decode. On the target's bytes by offset, like `RequestTarget`.
  static func decodedSegments(_ target: UnsafeBufferPointer<UInt8>)
    -> (segments: [String], escaped: UInt64)?
  {
    // An absolute-form target without a path is `/`: one empty segment.
    guard let raw = RequestTarget.rawPathRange(target) else { return ([""], 0) }
    guard var start = target[raw].firstIndex(of: UInt8(ascii: "/")) else { return ([], 0) }
    // Room for a typical route's segments at once, rather than growing 1, 2, 4.
    var segments: [String] = []
    segments.reserveCapacity(6)
    var escaped: UInt64 = 0
    var escape = false
    start += 1
    var i = start
    while true {
      if i == raw.upperBound || target[i] == UInt8(ascii: "/") {
        guard
          let segment = PercentDecoding.decode(
            UnsafeBufferPointer(rebasing: target[start..<i]), plusAsSpace: false)
        else { return nil }
        if escape { escaped |= 1 << UInt64(min(segments.count, 63)) }
        segments.append(segment)
        if i == raw.upperBound { return (segments, escaped) }
        start = i + 1
        escape = false
      } else if target[i] == UInt8(ascii: "%") {
        escape = true
      }
      i += 1
    }
  }

  private func pick(
    _ method: HTTPMethod, _ methods: MethodTable, parameters: PathParameters,
    route: String
  ) -> Resolution {
    if let handler = methods[method] ?? (method == .head ? methods[.get] : nil) {
      return .found(handler, parameters: parameters, route: route)
    }
    var allowed = Set(methods.methods)
    if allowed.contains(.get) { allowed.insert(.head) }
    let order = HTTPMethod.known + allowed.filter { !HTTPMethod.known.contains($0) }
    let allow = order.filter(allowed.contains).map(\.rawValue).joined(separator: ", ")
    return .methodNotAllowed(allow: allow)
  }
}
