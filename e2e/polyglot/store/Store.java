// The Java store of the polyglot harness (e2e/polyglot): the JDK's own HTTP
// server, with no OpenTelemetry code; the OpenTelemetry Java agent
// (-javaagent) instruments it and exports where OTEL_EXPORTER_OTLP_ENDPOINT says.
//
//   GET /stock/{id}  takes 4 ms; the line "step" on stdin makes it 3x slower
//
// It prints "port N" then "ready", and "switched <epoch ms>" after a step.
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

public class Store {
  static volatile int workMs = 4;

  public static void main(String[] args) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/stock/", exchange -> {
      try {
        Thread.sleep(workMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      String id = exchange.getRequestURI().getPath().substring("/stock/".length());
      byte[] body = ("{\"id\":\"" + id + "\",\"count\":7}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("content-type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("port " + server.getAddress().getPort());
    System.out.println("ready");
    System.out.flush();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("step")) {
        workMs = 12;
        System.out.println("switched " + System.currentTimeMillis());
        System.out.flush();
      }
    }
  }
}
