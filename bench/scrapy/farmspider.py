"""Scrapy peer of trawl's crawler comparison (bench/run.sh).

A CrawlSpider with one LinkExtractor rule that follows every link on the
benchmark web (*.farm.test), as Scrapy's documentation shows a recursive
crawl. Concurrency, robots.txt and the User-Agent come from -s settings on
the command line; the start URLs from -a start_file=FILE.
"""

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class FarmSpider(CrawlSpider):
    name = "farm"
    allowed_domains = ["farm.test"]
    # allowed_domains (OffsiteMiddleware) keeps the crawl on the farm; the
    # extractor's own allow_domains would compare host:port and drop every link.
    rules = (Rule(LinkExtractor(), follow=True),)

    def __init__(self, start_file=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with open(start_file) as f:
            self.start_urls = [line.strip() for line in f if line.strip()]
