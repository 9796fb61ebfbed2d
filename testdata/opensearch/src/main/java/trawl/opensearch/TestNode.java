package trawl.opensearch;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node for trawl's tests: an OpenSearch {@link Node} with the
 * netty4 transport and HTTP plugin and the common analysis plugin loaded from
 * the class path (as OpenSearch's own MockNode does), without the bootstrap
 * checks and plugin directories of a packaged distribution.
 *
 * <p>Every argument is one node setting, {@code key=value} (a value with
 * commas is a list), for example {@code path.home=DIR cluster.name=NAME
 * node.name=N http.port=P transport.port=T
 * discovery.seed_hosts=127.0.0.1:T1,127.0.0.1:T2}. The node runs until the
 * process is told to stop (SIGTERM closes it cleanly; the tests also kill
 * it with SIGKILL). "trawl-testnode: started" on standard output says its
 * HTTP interface is up.
 */
public final class TestNode extends Node {
    private TestNode(Environment env) {
        super(env, List.of(Netty4Plugin.class, CommonAnalysisPlugin.class), true);
    }

    public static void main(String[] args) throws Exception {
        Settings.Builder b = Settings.builder();
        for (String a : args) {
            int i = a.indexOf('=');
            if (i <= 0) {
                System.err.println("trawl-testnode: argument " + a + " is not key=value");
                System.exit(2);
            }
            String k = a.substring(0, i), v = a.substring(i + 1);
            if (v.indexOf(',') >= 0) {
                b.putList(k, Arrays.asList(v.split(",")));
            } else {
                b.put(k, v);
            }
        }
        Settings settings = b.build();
        LogConfigurator.registerErrorListener();
        LogConfigurator.configureWithoutConfig(settings);
        Environment env = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null,
            () -> settings.get("node.name", "trawl-testnode"));
        Node node = new TestNode(env);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (IOException e) {
                e.printStackTrace();
            }
            stopped.countDown();
        }));
        node.start();
        System.out.println("trawl-testnode: started");
        System.out.flush();
        stopped.await();
    }
}
