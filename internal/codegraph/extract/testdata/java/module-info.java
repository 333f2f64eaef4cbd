/** A module declaration defines nothing LocAgent counts. */
module com.acme.app {
    requires java.sql;
    requires transitive com.acme.util;
    exports com.acme.app.api;
    uses com.acme.spi.Plugin;
    provides com.acme.spi.Plugin with com.acme.app.DefaultPlugin;
}
