package org.dacapo.parser;

/** Stand-in for DaCapo's benchmark configuration; callbacks only see its {@code name}. */
public class Config {
  public final String name;

  public Config(String name) {
    this.name = name;
  }
}
