import Glibc
import HTTP
import StorekeeperLogging

// Serves a fixed small body for bench/http: `/healthz` immediately on the loop thread,
// `/async` through an async handler on the task pool, `/async-loop` through one placed on the
// event loop. Arguments: port, event-loop count.
let arguments = CommandLine.arguments
var configuration = ServerConfiguration()
configuration.port = arguments.count > 1 ? Int(arguments[1]) ?? 8080 : 8080
if arguments.count > 2, let loops = Int(arguments[2]) { configuration.eventLoopCount = loops }

let body = Array("{\"status\":\"ok\"}".utf8)
let headers: HTTPHeaders = ["Content-Type": "application/json"]
var router = Router()
router.addImmediate(.get, "/healthz") { _, _ in Response(headers: headers, body: body) }
router.add(.get, "/async") { _, _ in Response(headers: headers, body: body) }
router.add(.get, "/async-loop", placement: .eventLoop) { _, _ in
  Response(headers: headers, body: body)
}

let logger = Logger(label: "http-bench", level: .warning)
let server = HTTPServer(configuration: configuration, router: router, logger: logger)
let trap = SignalTrap([SIGTERM, SIGINT])
do {
  let port = try server.start()
  // Unbuffered, so the bench script sees it at once.
  let line = "listening on \(port)\n"
  _ = line.withCString { write(1, $0, strlen($0)) }
} catch {
  logger.critical("cannot start", ["error": .string(String(describing: error))])
  exit(1)
}
_ = await trap.wait()
await server.shutdown()
