package com.acme.partial;

import java.io.IOException;

/** The file ends in the middle of a method: what parsed is kept. */
public class Reader extends java.io.Reader {
    private final char[] buf = new char[8192];

    @Override
    public int read(char[] cbuf, int off, int len) throws IOException {
        return fill(cbuf, off, len);
    }

    public void close() {
        release(buf);
        new Object() {
            void cleanup() {
                Cleaner.run(
