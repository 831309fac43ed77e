package shardsearch.peer;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node on loopback: the reference the differential tests compare shardsearch with,
 * and the benchmark's peer. A plain {@link Node} whose plugins are taken from the classpath, so the
 * Maven build is the whole installation (the test framework's MockNode is not used: it asks for a
 * randomized-testing context and swaps in mock services). Prints {@code READY http://127.0.0.1:PORT} once HTTP is bound; stops on
 * SIGTERM, and on end of standard input with {@code --watch-stdin} (its parent died).
 *
 * <p>Usage: {@code OpenSearchPeer --port N --data DIR [--watch-stdin]} (port 0 picks a free one).
 */
public final class OpenSearchPeer {
    private OpenSearchPeer() {}

    public static void main(String[] args) throws Exception {
        int port = 9200;
        Path data = Paths.get("opensearch-data");
        boolean watchStdin = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[++i]); break;
                case "--data": data = Paths.get(args[++i]); break;
                case "--watch-stdin": watchStdin = true; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            settings(port, data.toAbsolutePath()), Map.of(), null, () -> "peer-0");
        Node node = new ClasspathNode(env, plugins());
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> close(node, closed), "peer-close"));
        node.start();
        HttpServerTransport http = node.injector().getInstance(HttpServerTransport.class);
        int bound = http.boundAddress().publishAddress().getPort();
        System.out.println("READY http://127.0.0.1:" + bound + " pid " + ProcessHandle.current().pid());
        System.out.flush();
        if (watchStdin) {
            drain(System.in);
            System.exit(0);
        }
        closed.await();
    }

    /** A single-node cluster bound to 127.0.0.1 only, its files under {@code data}. */
    static Settings settings(int port, Path data) throws IOException {
        Path home = Files.createDirectories(data.resolve("home"));
        return Settings.builder()
            .put("cluster.name", "shardsearch-peer")
            .put("node.name", "peer-0")
            .put("path.home", home.toString())
            .put("path.data", Files.createDirectories(data.resolve("data")).toString())
            .put("path.logs", Files.createDirectories(data.resolve("logs")).toString())
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", 0)
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("indices.breaker.total.use_real_memory", false)
            .build();
    }

    static List<Class<? extends Plugin>> plugins() {
        return List.of(Netty4Plugin.class, CommonAnalysisPlugin.class,
                       PainlessPlugin.class, ReindexPlugin.class);
    }

    /** Node's constructor that takes plugin classes is protected: this opens it. */
    static final class ClasspathNode extends Node {
        ClasspathNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
            super(env, plugins, true);
        }
    }

    private static void drain(InputStream in) throws IOException {
        byte[] buf = new byte[256];
        while (in.read(buf) >= 0) {
            // parent alive: nothing to do until end of input
        }
    }

    private static void close(Node node, CountDownLatch closed) {
        try {
            node.close();
            node.awaitClose(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            e.printStackTrace();
        } finally {
            closed.countDown();
        }
    }
}
